import { RpcInvalidMethodError } from '@warren/jsonrpc';

/**
 * Every AMQP resource name Warren uses, built in this one place from a
 * namespace. Method names only ever become routing keys on these fixed
 * exchanges, so no user-chosen name can create an exchange or a queue.
 */
export interface Names {
  readonly namespace: string;
  /** Direct exchange requests are published to, routing key = method name. */
  readonly requestExchange: string;
  /** Direct exchange notifications are published to; every queue bound for a method gets a copy. */
  readonly eventExchange: string;
  /** Dead-letter exchange, routing key = service name. */
  readonly deadLetterExchange: string;
  /** Fanout exchange for service announcements (discovery). */
  readonly controlExchange: string;
  /** Fanout exchange registries publish announce-now requests to; every instance's control queue is bound to it. */
  readonly discoverExchange: string;
  /** Fanout exchange for cancel requests: every instance hears each one. */
  readonly cancelExchange: string;
  /** Headers exchange of delay level `level` (delay.ts): what it routes waits 2^level ms in its queue, or goes on down. */
  delayExchange(level: number): string;
  /** The queue of delay level `level`: every message in it waits 2^level ms (its TTL), then moves one level down. */
  delayQueue(level: number): string;
  /** Headers exchange a delayed message reaches when due: on to the request or event exchange (`warren-delay-to`). */
  readonly delayDueExchange: string;
  serviceQueue(service: string): string;
  deadLetterQueue(service: string): string;
  /** A delay queue of a service: holds retried requests `delayMs`, then dead-letters them back to its queue. */
  retryQueue(service: string, delayMs: number): string;
  serviceEventQueue(service: string): string;
  instanceEventQueue(service: string, instanceId: string): string;
  replyQueue(clientId: string): string;
  /** A named reply queue's restart probe (engine/restart-probe.ts): its transient marker is lost only when the broker restarts. */
  replyProbeQueue(clientId: string): string;
  /** An instance's private queue of control messages (announce-now requests). */
  instanceControlQueue(service: string, instanceId: string): string;
  /** An instance's own (exclusive) queue on the cancel exchange. */
  cancelQueue(service: string, instanceId: string): string;
}

const namePattern = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;

/** Checks a namespace or service name; they end up in queue names, so they are kept to a safe alphabet. */
export function assertResourceName(kind: string, value: string): void {
  if (!namePattern.test(value)) throw new TypeError(`${kind} must match ${namePattern.source}, got ${JSON.stringify(value)}`);
}

export function names(namespace = 'warren'): Names {
  assertResourceName('namespace', namespace);
  const ns = namespace;
  return {
    namespace: ns,
    requestExchange: `${ns}.rpc`,
    eventExchange: `${ns}.events`,
    deadLetterExchange: `${ns}.dlx`,
    controlExchange: `${ns}.control`,
    discoverExchange: `${ns}.discover`,
    cancelExchange: `${ns}.cancel`,
    delayExchange: (level) => `${ns}.delay.${level}`,
    delayQueue: (level) => `${ns}.delay.${level}.wait`,
    delayDueExchange: `${ns}.delay.due`,
    serviceQueue: (service) => `${ns}.svc.${service}`,
    deadLetterQueue: (service) => `${ns}.svc.${service}.dead`,
    retryQueue: (service, delayMs) => `${ns}.svc.${service}.retry.${delayMs}`,
    serviceEventQueue: (service) => `${ns}.evt.${service}`,
    instanceEventQueue: (service, instanceId) => `${ns}.evt.${service}.${instanceId}`,
    replyQueue: (clientId) => `${ns}.reply.${clientId}`,
    replyProbeQueue: (clientId) => `${ns}.reply.${clientId}.probe`,
    instanceControlQueue: (service, instanceId) => `${ns}.ctl.${service}.${instanceId}`,
    cancelQueue: (service, instanceId) => `${ns}.cancel.${service}.${instanceId}`,
  };
}

/** AMQP short strings (routing keys) hold at most 255 bytes. */
const maxRoutingKeyBytes = 255;

/**
 * A method name usable as a routing key. Longer names, or ones with control
 * characters, cannot be served by anyone, so they fail locally and at once
 * (RpcInvalidMethodError; -32600 `invalid_method_name` on the wire).
 */
export function assertMethodName(method: string): void {
  // eslint-disable-next-line no-control-regex
  if (method.length === 0 || Buffer.byteLength(method) > maxRoutingKeyBytes || /[\u0000-\u001f\u007f]/.test(method)) {
    throw new RpcInvalidMethodError();
  }
}

export function isValidMethodName(method: string): boolean {
  try {
    assertMethodName(method);
    return true;
  } catch {
    return false;
  }
}
