import Ajv, { type ValidateFunction } from 'ajv';
import type { JsonSchema } from '@warren/jsonrpc';
import { isValidMethodName } from '../wire/names';
import { announcementSchema, protocolVersion } from '../wire/protocol-schemas';
import type { ErrorDescription, ToolSpec } from '../wire/method-declarations';
import type { QueueType } from '../wire/topology';
import type { TrackingReport } from '@warren/calls';
import type { WorkerReport } from '../wire/worker-control';
import { copyScheduleDeclaration, type ScheduleDeclaration } from '../wire/schedule-declaration';

/** How a method describes itself for discovery (OpenRPC) and MCP tools. */
export interface MethodDescription {
  readonly name: string;
  readonly description?: string;
  readonly params?: JsonSchema;
  readonly result?: JsonSchema;
  readonly errors?: readonly ErrorDescription[];
  /** A long-running job: callers should send it persistent, with a generous deadline. */
  readonly jobStyle?: boolean;
  readonly tool?: ToolSpec;
}

/** How a notification a service handles describes itself. */
export interface NotificationDescription {
  readonly name: string;
  readonly description?: string;
  readonly params?: JsonSchema;
}

/** An instance's announcement as a registry holds it: every optional field of the wire form filled in. */
export interface AnnounceMessage {
  readonly v: typeof protocolVersion;
  readonly type: 'announce';
  readonly service: string;
  readonly instanceId: string;
  readonly startedAt: number;
  readonly intervalMs: number;
  readonly methods: readonly MethodDescription[];
  readonly notifications: readonly NotificationDescription[];
  readonly instanceNotifications: readonly NotificationDescription[];
  readonly metadata: Readonly<Record<string, string>>;
  readonly running: number;
  /** Its consumers are in place; false while RabbitMQ has cancelled them and it retries (issue 28). Default true. */
  readonly consuming: boolean;
  /** The service request queue is durable. */
  readonly durable: boolean;
  readonly queueType: QueueType;
  /** The instance's in-flight tracking, when it has a tracker that reports. */
  readonly tracking?: TrackingReport;
  /** Where it runs, how it consumes, what it did, and the operator's controls it obeys (absent from older instances). */
  readonly worker?: WorkerReport;
  /** Schedules the service defines in code (absent when none, and from older instances). */
  readonly schedules?: readonly ScheduleDeclaration[];
}

export interface WithdrawMessage {
  readonly v: typeof protocolVersion;
  readonly type: 'withdraw';
  readonly service: string;
  readonly instanceId: string;
}

/**
 * What service instances publish on the control exchange: on start, every
 * `intervalMs` after, in answer to an announce-now request, and a `withdraw`
 * on close. docs/schemas/announcement.schema.json is its contract.
 */
export type Announcement = AnnounceMessage | WithdrawMessage;

/** Larger bodies are not parsed at all. */
export const maxAnnouncementBytes = 1024 * 1024;

/** Why an announcement was dropped; `sender` names it as far as it could be read. */
export type AnnouncementParse =
  | { readonly ok: true; readonly announcement: Announcement }
  | { readonly ok: false; readonly reason: 'too_large' | 'not_json' | 'schema' | 'method_name'; readonly sender: string; readonly details: string };

let validator: ValidateFunction | undefined;

/** Compiled on first use, in strict mode: a schema ajv would have to guess about is a bug here, not a warning. */
function validate(value: unknown): ValidateFunction['errors'] | undefined {
  validator ??= new Ajv({ strict: true, allErrors: false }).compile(announcementSchema);
  return validator(value) ? undefined : (validator.errors ?? []);
}

/**
 * Reads an announcement from untrusted bytes. Anything that does not fit the
 * schema is refused whole: a registry holds only announcements every view
 * (rpc.discover, /services, MCP, metrics) can be built from.
 */
export function parseAnnouncement(body: Buffer): AnnouncementParse {
  if (body.length > maxAnnouncementBytes) return { ok: false, reason: 'too_large', sender: 'unknown', details: `${body.length} bytes` };
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return { ok: false, reason: 'not_json', sender: 'unknown', details: 'not JSON' };
  }
  const errors = validate(value);
  if (errors) {
    const first = errors[0];
    return { ok: false, reason: 'schema', sender: senderOf(value), details: first ? `${first.instancePath || '/'} ${first.message ?? 'is invalid'}` : 'invalid' };
  }
  const announcement = normalize(value as WireAnnouncement);
  if (announcement.type === 'announce' && !methodNamesFit(announcement)) return { ok: false, reason: 'method_name', sender: senderOf(value), details: 'a method or notification name is longer than 255 bytes' };
  return { ok: true, announcement };
}

/** `service/instanceId` as far as they are strings, for logging who sent something unreadable. */
function senderOf(value: unknown): string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'unknown';
  const v = value as Record<string, unknown>;
  if (typeof v['service'] !== 'string' && typeof v['instanceId'] !== 'string') return 'unknown';
  const part = (x: unknown): string => (typeof x === 'string' ? x.slice(0, 100) : '?');
  return `${part(v['service'])}/${part(v['instanceId'])}`;
}

/** The wire form: what the schema guarantees, before defaults. */
type WireAnnouncement =
  | WithdrawMessage
  | (Omit<AnnounceMessage, 'instanceNotifications' | 'metadata' | 'running' | 'consuming' | 'durable' | 'queueType'> & Partial<Pick<AnnounceMessage, 'instanceNotifications' | 'metadata' | 'running' | 'consuming' | 'durable' | 'queueType'>>);

/** Keeps the known fields only (unknown ones are for later versions, never shown), with defaults filled in. */
function normalize(w: WireAnnouncement): Announcement {
  if (w.type === 'withdraw') return { v: protocolVersion, type: 'withdraw', service: w.service, instanceId: w.instanceId };
  return {
    v: protocolVersion,
    type: 'announce',
    service: w.service,
    instanceId: w.instanceId,
    startedAt: w.startedAt,
    intervalMs: w.intervalMs,
    methods: w.methods.map(methodOf),
    notifications: w.notifications.map(notificationOf),
    instanceNotifications: (w.instanceNotifications ?? []).map(notificationOf),
    metadata: { ...w.metadata },
    running: w.running ?? 0,
    consuming: w.consuming ?? true,
    durable: w.durable ?? false,
    queueType: w.queueType ?? 'classic',
    ...(w.tracking === undefined ? {} : { tracking: { state: w.tracking.state, since: w.tracking.since, degradedTransitions: w.tracking.degradedTransitions, untracked: w.tracking.untracked } }),
    ...(w.worker === undefined ? {} : { worker: workerOf(w.worker) }),
    ...(w.schedules === undefined || w.schedules.length === 0 ? {} : { schedules: w.schedules.map(copyScheduleDeclaration) }),
  };
}

function methodOf(m: MethodDescription): MethodDescription {
  return {
    name: m.name,
    ...(m.description === undefined ? {} : { description: m.description }),
    ...(m.params === undefined ? {} : { params: m.params }),
    ...(m.result === undefined ? {} : { result: m.result }),
    ...(m.errors === undefined ? {} : { errors: m.errors.map((e) => ({ code: e.code, message: e.message, ...(e.description === undefined ? {} : { description: e.description }), ...(e.data === undefined ? {} : { data: e.data }) })) }),
    ...(m.jobStyle === undefined ? {} : { jobStyle: m.jobStyle }),
    ...(m.tool === undefined ? {} : { tool: { description: m.tool.description, ...(m.tool.name === undefined ? {} : { name: m.tool.name }), ...(m.tool.inputSchema === undefined ? {} : { inputSchema: m.tool.inputSchema }) } }),
  };
}

/** The schema makes every field optional (a partial report from another language); what is missing reads as nothing done. */
function workerOf(w: Partial<WorkerReport>): WorkerReport {
  const l = w.lastControl;
  return {
    host: w.host ?? '', pid: w.pid ?? 0, prefetch: w.prefetch ?? 0, paused: w.paused ?? false, draining: w.draining ?? false, handled: w.handled ?? 0, failed: w.failed ?? 0,
    ...(l === undefined ? {} : { lastControl: { requestId: l.requestId, action: l.action, at: l.at, ...(l.cancelled === undefined ? {} : { cancelled: l.cancelled }) } }),
  };
}

function notificationOf(n: NotificationDescription): NotificationDescription {
  return { name: n.name, ...(n.description === undefined ? {} : { description: n.description }), ...(n.params === undefined ? {} : { params: n.params }) };
}

/** The schema bounds a name's characters; routing keys are bounded in bytes, which only code can count. */
function methodNamesFit(a: AnnounceMessage): boolean {
  return [...a.methods, ...a.notifications, ...a.instanceNotifications].every((m) => isValidMethodName(m.name));
}
