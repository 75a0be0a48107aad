// The jobs service's handlers: `report.render`, a long-running job whose
// length is set by its `size`, reporting its progress through `ctx.progress`
// (stored on the call's in-flight record, pushed to callers that ask), and
// `report.progress`, which reads a running or finished job's progress by call
// id from the in-flight store, so any instance can answer for a job another runs.
import { setTimeout as sleep } from 'node:timers/promises';
import type { ServiceMethod } from '@warren/amqp';
import type { EventStore, Json } from '@warren/eventlog';
import type { CallStatus } from '@warren/inflight';
import type { JsonSchema, JsonValue } from '@warren/jsonrpc';

export interface JobsOptions {
  /** Where completions are appended (what the kill test counts). */
  readonly store: EventStore;
  /** Names this service's records: `<namespace>.<service>`. */
  readonly prefix: string;
  /** A call's in-flight status (`InflightView.status`), which `report.progress` answers from. */
  readonly status: (callId: string) => Promise<CallStatus>;
  /** Time one unit of `size` takes. @default 1000 */
  readonly stepMs?: number;
  /** Largest accepted `size`. @default 600 */
  readonly maxSize?: number;
}

/** A job's progress, as `report.progress` answers it (from its in-flight record). */
export interface JobProgress {
  readonly callId: string;
  readonly state: CallStatus['state'];
  /** 0..100, from the last `ctx.progress` (100 once done). */
  readonly percent: number;
  readonly message?: string;
  readonly worker?: string;
  readonly attempt?: number;
  /** When the last progress was reported, ms since the epoch. */
  readonly updatedAt?: number;
}

export interface RenderResult {
  readonly report: string;
  readonly size: number;
  readonly pages: number;
  readonly renderedBy: string;
  readonly attempt: number;
  readonly tookMs: number;
}

/** One entry per job finished, in `<prefix>.completed`: what the kill test counts. */
export interface Completion {
  readonly callId: string;
  readonly instanceId: string;
  readonly attempt: number;
  readonly at: number;
}

export const jobsDefaults = { stepMs: 1000, maxSize: 600 } as const;

export function completedStream(prefix: string): string {
  return `${prefix}.completed`;
}

export function jobsMethods(options: JobsOptions): Record<string, ServiceMethod> {
  const o = { ...jobsDefaults, ...options };

  const render: ServiceMethod = {
    // Announced: /services, rpc.discover and `warren services` tell callers to send it persistent.
    jobStyle: true,
    description: 'Renders a report; takes `size` steps of the configured step time (1 s by default), reporting progress (ctx.progress) after each.',
    params: {
      type: 'object',
      properties: {
        size: { type: 'integer', minimum: 1, maximum: o.maxSize, description: 'How many steps the job takes.' },
        title: { type: 'string', maxLength: 200 },
      },
      required: ['size'],
      additionalProperties: false,
    },
    result: { type: 'object', properties: { report: { type: 'string' }, size: { type: 'integer' }, pages: { type: 'integer' }, renderedBy: { type: 'string' }, attempt: { type: 'integer' }, tookMs: { type: 'integer' } } },
    handler: async (params, ctx) => {
      const { size, title } = params as { size: number; title?: string };
      const startedAt = Date.now();
      ctx.log.info({ size, attempt: ctx.attempt }, 'render started');
      ctx.progress(0, `page 0 of ${size}`);
      for (let step = 1; step <= size; step++) {
        // Rejects when the call is cancelled, passes its deadline or the service shuts down;
        // the runtime then answers (or requeues) for us.
        await sleep(o.stepMs, undefined, { signal: ctx.signal });
        ctx.log.info({ step, of: size }, 'render progress');
        ctx.progress(step / size, `page ${step} of ${size}`);
      }
      const completion: Completion = { callId: ctx.callId, instanceId: ctx.instanceId, attempt: ctx.attempt, at: Date.now() };
      await o.store.append(completedStream(o.prefix), completion as unknown as Json).catch((err: unknown) => ctx.log.warn({ err }, 'completion not recorded'));
      const result: RenderResult = { report: `${title ?? 'report'}-${ctx.callId}`, size, pages: size * 10, renderedBy: ctx.instanceId, attempt: ctx.attempt, tookMs: Date.now() - startedAt };
      ctx.log.info({ tookMs: result.tookMs }, 'render finished');
      return result as unknown as JsonValue;
    },
  };

  const progress: ServiceMethod = {
    description: 'Progress of a report.render call by its call id, from the in-flight store: { callId } or [callId]; null when unknown or expired.',
    params: {
      oneOf: [
        { type: 'object', properties: { callId: { type: 'string', minLength: 1, maxLength: 150 } }, required: ['callId'], additionalProperties: false },
        { type: 'array', items: [{ type: 'string', minLength: 1, maxLength: 150 }], minItems: 1, maxItems: 1 },
      ],
    } satisfies JsonSchema,
    handler: async (params) => {
      const callId = Array.isArray(params) ? (params[0] as string) : (params as { callId: string }).callId;
      const status = await o.status(callId);
      if (status.state === 'unknown') return null;
      const p = status.progress;
      const answer: JobProgress = {
        callId,
        state: status.state,
        percent: status.state === 'done' ? 100 : Math.floor((p?.fraction ?? 0) * 100),
        ...(p?.message === undefined ? {} : { message: p.message }),
        ...(status.worker === undefined ? {} : { worker: status.worker }),
        ...(status.attempt === undefined ? {} : { attempt: status.attempt }),
        ...(p === undefined ? {} : { updatedAt: p.at }),
      };
      return answer as unknown as JsonValue;
    },
  };

  return { 'report.render': render, 'report.progress': progress };
}
