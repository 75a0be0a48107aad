// Which part of the API `warren gen` writes clients for: `--service NAME` (repeatable) keeps those
// services' methods and the notifications they subscribe to; the broker's own methods (workers.*,
// dlq.*, schedule.*, inflight.*, history.*, delayed.*, calls.*: an operator's, not an application's)
// are left out unless `--operator-methods` asks for them or `--service` names the broker.
import { UsageError } from '../errors';
import type { ApiModel } from './api-model';

export interface Selection {
  /** Only these services (`--service`, repeatable). @default every service */
  readonly services?: readonly string[];
  /** Keep the broker's methods too (`--operator-methods`). @default false */
  readonly operatorMethods?: boolean;
}

/** The broker's name when its announcement does not say its role (documents saved before it did). */
const defaultBrokerName = 'warren-broker';

/**
 * The services of an OpenRPC document that are a Warren broker: `x-warren-services` entries with
 * `role: "broker"` (rpc.discover sets it from the broker's announced `metadata.role`), else the one
 * named `warren-broker`.
 */
export function brokerServices(doc: unknown): Set<string> {
  const entries = typeof doc === 'object' && doc !== null && Array.isArray((doc as Record<string, unknown>)['x-warren-services']) ? ((doc as Record<string, unknown>)['x-warren-services'] as unknown[]) : [];
  const named = entries.flatMap((e) => (typeof e === 'object' && e !== null && typeof (e as Record<string, unknown>)['name'] === 'string' ? [e as Record<string, unknown>] : []));
  const brokers = named.filter((e) => e['role'] === 'broker').map((e) => e['name'] as string);
  return new Set(brokers.length > 0 ? brokers : [defaultBrokerName]);
}

/** The model cut to the selection, and how many operator methods were left out (to say so). Throws a UsageError for a service the document does not know. */
export function selectApi(model: ApiModel, brokers: ReadonlySet<string>, selection: Selection): { readonly model: ApiModel; readonly operatorLeftOut: number } {
  const wanted = selection.services && selection.services.length > 0 ? new Set(selection.services) : undefined;
  if (wanted) {
    const known = new Set([...model.methods.flatMap((m) => (m.service === undefined ? [] : [m.service])), ...model.notifications.flatMap((n) => n.services)]);
    const unknown = [...wanted].filter((s) => !known.has(s));
    if (unknown.length > 0) throw new UsageError(`--service ${unknown.map((s) => JSON.stringify(s)).join(', ')}: no such service in the document (it has ${[...known].sort().join(', ') || 'none'})`);
  }
  const operator = (service: string | undefined): boolean => service !== undefined && brokers.has(service) && !(selection.operatorMethods === true || wanted?.has(service) === true);
  const chosen = (service: string | undefined): boolean => wanted === undefined || (service !== undefined && wanted.has(service));
  const methods = model.methods.filter((m) => chosen(m.service) && !operator(m.service));
  const operatorLeftOut = model.methods.filter((m) => chosen(m.service) && operator(m.service)).length;
  const notifications = wanted === undefined ? model.notifications : model.notifications.filter((n) => n.services.some((s) => wanted.has(s)));
  return { model: { ...model, methods, notifications }, operatorLeftOut };
}
