import { randomBytes } from 'node:crypto';
import type { WireChannel } from '@warren/amqp-transport';
import type { Names } from './names';

/** What an operator can ask of one worker instance (docs/protocol-discovery.md, "Worker controls"). */
export const workerActions = ['pause', 'resume', 'drain', 'cancel-all'] as const;
export type WorkerAction = (typeof workerActions)[number];

/**
 * A worker control on the wire: published to one instance's own control queue
 * (`NS.ctl.<service>.<instanceId>`, the queue announce-now requests reach it on)
 * through the default exchange, so only that instance hears it.
 *
 * - `pause`: cancel its consumers; calls wait in the queue (for another instance, or for `resume`).
 * - `resume`: consume again.
 * - `drain`: take no new call, finish the running ones, withdraw and stop (a graceful shutdown).
 * - `cancel-all`: abort every call running there; each caller is answered -32003.
 *
 * The instance says it applied one in its next announcement (`worker.lastControl.requestId`).
 */
export interface WorkerControlMessage {
  readonly v: 1;
  readonly type: 'worker-control';
  readonly action: WorkerAction;
  /** Names this request; the instance echoes it in `worker.lastControl`. */
  readonly requestId: string;
}

/** What an instance announces of the last control it applied. */
export interface AppliedControl {
  readonly requestId: string;
  readonly action: WorkerAction;
  /** When it was applied, ms since the epoch. */
  readonly at: number;
  /** `cancel-all`: how many running calls it aborted. */
  readonly cancelled?: number;
}

/** How long an unheard control stays in the queue: a control is for now, not for an instance that comes back later. */
const controlTtlMs = 30_000;

/** Reads a worker control; undefined for anything else (an announce-now request, or junk). Never throws. */
export function parseWorkerControl(body: Buffer): WorkerControlMessage | undefined {
  if (body.length > 4096) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const m = value as Record<string, unknown>;
  if (m['type'] !== 'worker-control' || m['v'] !== 1) return undefined;
  const action = m['action'];
  const requestId = m['requestId'];
  if (typeof action !== 'string' || !(workerActions as readonly string[]).includes(action)) return undefined;
  if (typeof requestId !== 'string' || requestId.length === 0 || requestId.length > 64) return undefined;
  return { v: 1, type: 'worker-control', action: action as WorkerAction, requestId };
}

/**
 * Publishes a worker control to one instance and answers its request id. An instance that is gone
 * took its exclusive queue with it: the default exchange drops the message, and nobody acts (the
 * sender, waiting for the echo, says so).
 */
export function publishWorkerControl(channel: WireChannel, n: Names, service: string, instanceId: string, action: WorkerAction): string {
  const message: WorkerControlMessage = { v: 1, type: 'worker-control', action, requestId: randomBytes(8).toString('hex') };
  channel.publish('', n.instanceControlQueue(service, instanceId), Buffer.from(JSON.stringify(message)), { contentType: 'application/json', expiration: String(controlTtlMs) });
  return message.requestId;
}

/** The `worker` part of an announcement (docs/schemas/announcement.schema.json): the instance as an operator sees it. */
export interface WorkerReport {
  readonly host: string;
  readonly pid: number;
  /** Unacknowledged deliveries it takes at once per consumer. */
  readonly prefetch: number;
  /** Paused by an operator: its work consumers are cancelled until resumed (a restart forgets it). */
  readonly paused: boolean;
  /** Draining: it takes no new call, finishes the running ones, then withdraws and stops. */
  readonly draining: boolean;
  /** Requests answered since it started. */
  readonly handled: number;
  /** Of those, the ones it ran whose final answer was an error. */
  readonly failed: number;
  readonly lastControl?: AppliedControl;
}
