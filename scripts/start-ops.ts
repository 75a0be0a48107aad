// `npm start`'s ops ports: every service process gets one of its own (/healthz, /readyz, /metrics, the
// worker's Prometheus series), from a base upward, so a scraper or a curl finds each at an address the
// banner prints. The broker needs none: its /metrics is on the gateway.
// Any number of stacks share a machine (each with its own WARREN_NAMESPACE and GATEWAY_PORT): a port
// another process holds is skipped for the next free one (freeOpsPorts), and a port taken between this
// check and the child's listen only costs that child its ops port (runServiceMain logs it and runs on).
import { createServer } from 'node:net';

/** The first service's ops port when WARREN_OPS_PORT does not name another (the port compose uses inside each container). */
export const defaultOpsBase = 9464;

/**
 * Each service process's `WARREN_OPS_PORT`, in the order given: `base`, `base + 1`, ... where the base is
 * `WARREN_OPS_PORT` (unset or empty: {@link defaultOpsBase}); `off` gives none (each child sees it empty,
 * which is unset). Throws a RangeError naming the variable for anything else.
 *
 * @example opsPorts({}, ['calculator-1', 'calculator-2']) // { 'calculator-1': '9464', 'calculator-2': '9465' }
 */
export function opsPorts(env: NodeJS.ProcessEnv, services: readonly string[]): Record<string, string> {
  const raw = env['WARREN_OPS_PORT']?.trim() ?? '';
  if (raw.toLowerCase() === 'off') return Object.fromEntries(services.map((name) => [name, '']));
  const base = raw === '' ? defaultOpsBase : Number(raw);
  if (!/^\d+$/.test(raw === '' ? String(base) : raw) || base < 1 || base + services.length - 1 > 65535) {
    throw new RangeError(`WARREN_OPS_PORT must be "off" or the first of ${services.length} TCP ports (1-${65536 - services.length}), got ${JSON.stringify(env['WARREN_OPS_PORT'])}`);
  }
  return Object.fromEntries(services.map((name, i) => [name, String(base + i)]));
}

/** Whether `port` can be listened on at `host` now (nothing else holds it). */
export function portFree(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/**
 * {@link opsPorts}, each moved up to the first port from its own that is free at `host` and not given
 * to an earlier service: a second stack on the machine gets the ports after the first's. A service for
 * which no port up to 65535 is free gets none (empty: its ops port off).
 *
 * @example await freeOpsPorts({}, ['calculator-1', 'calculator-2'], '127.0.0.1') // 9464 and 9465, or the next free ones
 */
export async function freeOpsPorts(env: NodeJS.ProcessEnv, services: readonly string[], host: string, free: (port: number, host: string) => Promise<boolean> = portFree): Promise<Record<string, string>> {
  const planned = opsPorts(env, services);
  const chosen: Record<string, string> = {};
  let next = 0;
  for (const name of services) {
    const wanted = Number(planned[name]);
    if (planned[name] === '') {
      chosen[name] = '';
      continue;
    }
    let port = Math.max(wanted, next);
    while (port <= 65535 && !(await free(port, host))) port++;
    chosen[name] = port <= 65535 ? String(port) : '';
    next = port + 1;
  }
  return chosen;
}
