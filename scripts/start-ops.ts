// `npm start`'s ops ports: every service process gets one of its own (/healthz, /readyz, /metrics, the
// worker's Prometheus series), numbered up from a base, so a scraper or a curl finds each at a known
// address. The broker needs none: its /metrics is on the gateway.

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
