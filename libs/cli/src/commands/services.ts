import { ServiceRegistry, summarizeInstance, type InstanceInfo, type InstanceSummary, type TrackingReport } from '@warren/amqp';
import { AmqpConnection } from '@warren/amqp-transport';
import { redactUrl } from '@warren/logger';
import { ExitCode, UnreachableError, type ExitCodeValue } from '../errors';
import { duration, table } from '../format';
import type { Session } from '../session';

/** The services view, whichever source it came from; the shape of the gateway's `GET /services`. */
export interface ServicesView {
  readonly source: 'gateway' | 'registry';
  readonly services: readonly {
    readonly name: string;
    readonly instances: readonly (Omit<InstanceSummary, 'lastSeen' | 'metadata'> & Partial<Pick<InstanceSummary, 'lastSeen' | 'metadata'>>)[];
    readonly methods: readonly { readonly name: string; readonly description?: string; readonly tool?: string; readonly jobStyle?: boolean }[];
    readonly notifications: readonly string[];
    readonly instanceNotifications?: readonly string[];
  }[];
}

/**
 * Asks the gateway's `GET /services`. Undefined when it is off, does not
 * answer within `timeoutMs`, or serves another namespace than ours.
 */
async function fromGateway(s: Session, timeoutMs: number): Promise<ServicesView | undefined> {
  const base = s.settings.gateway;
  if (base === undefined) return undefined;
  try {
    const response = await fetch(new URL('/services', base), {
      signal: AbortSignal.timeout(timeoutMs),
      headers: s.io.env['WARREN_TOKEN'] ? { authorization: `Bearer ${s.io.env['WARREN_TOKEN']}` } : {},
    });
    if (!response.ok) return undefined;
    const body = (await response.json()) as Omit<ServicesView, 'source'> & { namespace?: string };
    if (!Array.isArray(body.services)) return undefined;
    // A gateway that says which namespace it serves must serve ours; one that does not is trusted
    // only when named on purpose or when we use the default namespace (the one it serves by default).
    if (body.namespace !== undefined ? body.namespace !== s.settings.namespace : !s.settings.gatewayExplicit && s.settings.namespace !== 'warren') return undefined;
    return { source: 'gateway', services: body.services };
  } catch {
    return undefined;
  }
}

/**
 * Builds the view from the announcements on the control exchange: the
 * registry asks every instance to announce now, so the view is complete once
 * that round is over; `waitMs` listens longer, for instances that only
 * announce on their interval.
 */
async function fromRegistry(s: Session, waitMs: number): Promise<ServicesView> {
  const connection = new AmqpConnection({ urls: [...s.settings.amqpUrls], startTimeoutMs: s.settings.connectTimeoutMs, connectionName: 'warren-cli-services', reconnect: { initialDelayMs: 100, maxDelayMs: 1000 } });
  try {
    await connection.start();
  } catch (err) {
    throw new UnreachableError(`RabbitMQ at ${s.settings.amqpUrls.map(redactUrl).join(', ')}`, err);
  }
  try {
    const started = Date.now();
    const registry = await ServiceRegistry.start(connection, { namespace: s.settings.namespace });
    await registry.discovered();
    const left = waitMs - (Date.now() - started);
    if (left > 0) await new Promise((r) => setTimeout(r, left));
    const grouped = registry.byService();
    await registry.close();
    return { source: 'registry', services: [...grouped].sort(([a], [b]) => a.localeCompare(b)).map(([name, instances]) => summarize(name, instances)) };
  } finally {
    await connection.close();
  }
}

function summarize(name: string, instances: readonly InstanceInfo[]): ServicesView['services'][number] {
  const newest = [...instances].sort((a, b) => b.startedAt - a.startedAt)[0];
  return {
    name,
    instances: instances.map(summarizeInstance),
    methods: (newest?.methods ?? []).map((m) => ({
      name: m.name,
      ...(m.description === undefined ? {} : { description: m.description }),
      ...(m.tool === undefined ? {} : { tool: m.tool.name ?? m.name }),
      ...(m.jobStyle === true ? { jobStyle: true } : {}),
    })),
    notifications: [...new Set(instances.flatMap((i) => i.notifications.map((n) => n.name)))].sort(),
    instanceNotifications: [...new Set(instances.flatMap((i) => i.instanceNotifications.map((n) => n.name)))].sort(),
  };
}

/**
 * `warren services`: live services, their instances, methods and
 * subscriptions — from the gateway's `GET /services` when it answers, else
 * from the announcements on RabbitMQ heard within `--wait` ms.
 */
export async function servicesCommand(s: Session, flags: { readonly wait: number }): Promise<ExitCodeValue> {
  const view = (await fromGateway(s, 1000)) ?? (await fromRegistry(s, flags.wait));
  if (s.settings.json) {
    s.out(JSON.stringify(view));
    return ExitCode.ok;
  }
  if (view.services.length === 0) {
    s.out(s.c.dim(`no live services in namespace ${s.settings.namespace} (source: ${view.source})`));
    return ExitCode.ok;
  }
  const now = Date.now();
  for (const svc of view.services) {
    s.out(`${s.c.bold(svc.name)}  ${s.c.dim(`${svc.instances.length} instance${svc.instances.length === 1 ? '' : 's'}`)}`);
    const tracked = svc.instances.some((i) => i.tracking !== undefined);
    const rows = svc.instances.map((i) => [i.instanceId, duration(now - i.startedAt), String(i.running), ...(tracked ? [trackingCell(i.tracking, s)] : [])]);
    s.out(indent(table(['instance', 'up', 'running', ...(tracked ? ['tracking'] : [])], rows, s.c, new Set([2]))));
    if (svc.methods.length > 0) s.out(indent(`methods: ${svc.methods.map((m) => [m.name, ...(m.tool ? [s.c.cyan('(tool)')] : []), ...(m.jobStyle ? [s.c.cyan('(job)')] : [])].join(' ')).join(', ')}`));
    const subs = [...svc.notifications, ...(svc.instanceNotifications ?? []).map((n) => `${n} (per instance)`)];
    if (subs.length > 0) s.out(indent(`notifications: ${subs.join(', ')}`));
    s.out('');
  }
  s.out(s.c.dim(`source: ${view.source}`));
  return ExitCode.ok;
}

/** An instance's tracking state; a degraded one stands out (its calls run without dedupe or cancel). */
function trackingCell(report: TrackingReport | undefined, s: Session): string {
  if (report === undefined) return '-';
  return report.state === 'tracking' ? report.state : s.c.red(report.state);
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');
}
