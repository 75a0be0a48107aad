// The jobs service's handlers: `report.render`, a long-running job whose
// length is set by its `size`, and `report.progress`, which reads a running or
// finished job's progress by call id. Progress lives in a small Redis record
// (an EventStore here), so any instance can answer for a job another runs.
import { setTimeout as sleep } from 'node:timers/promises';
import type { HandlerContext, ServiceMethod } from '@warren/amqp';
import type { EventStore, Json } from '@warren/eventlog';
import type { JsonSchema, JsonValue } from '@warren/jsonrpc';

export interface JobsOptions {
  readonly store: EventStore;
  /** Names this service's records: `<namespace>.<service>`. */
  readonly prefix: string;
  /** Time one unit of `size` takes. @default 1000 */
  readonly stepMs?: number;
  /** Largest accepted `size`. @default 600 */
  readonly maxSize?: number;
  /** How long progress and completion records outlive the job's deadline. @default 600000 */
  readonly keepMs?: number;
}

/** A job's progress, as `report.progress` answers it. */
export interface JobProgress {
  readonly callId: string;
  readonly state: 'running' | 'done' | 'failed';
  /** Steps done, of `of`. */
  readonly step: number;
  readonly of: number;
  readonly percent: number;
  readonly instanceId: string;
  readonly attempt: number;
  readonly startedAt: number;
  readonly updatedAt: number;
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

export const jobsDefaults = { stepMs: 1000, maxSize: 600, keepMs: 600_000 } as const;

/** Progress record name of one call. Call ids are `<clientId>.<seq>`; foreign ones may be anything, so they are checked. */
export function progressRecord(prefix: string, callId: string): string {
  return `${prefix}.progress.${callId}`;
}

export function completedStream(prefix: string): string {
  return `${prefix}.completed`;
}

export function jobsMethods(options: JobsOptions): Record<string, ServiceMethod> {
  const o = { ...jobsDefaults, ...options };
  const ttlFor = (ctx: HandlerContext): number => Math.max(1000, ctx.deadline - Date.now() + o.keepMs);
  // Progress is an aid: a failing store is logged, never fails the job.
  const save = (ctx: HandlerContext, p: JobProgress): Promise<void> =>
    o.store.put(progressRecord(o.prefix, ctx.callId), p as unknown as Json, ttlFor(ctx)).catch((err: unknown) => ctx.log.warn({ err }, 'progress not recorded'));

  const render: ServiceMethod = {
    // Announced: /services, rpc.discover and `warren services` tell callers to send it persistent.
    jobStyle: true,
    description: 'Renders a report; takes `size` steps of the configured step time (1 s by default), reporting progress after each (see report.progress).',
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
      const progress = (state: JobProgress['state'], step: number): JobProgress => ({
        callId: ctx.callId, state, step, of: size, percent: Math.floor((step / size) * 100), instanceId: ctx.instanceId, attempt: ctx.attempt, startedAt, updatedAt: Date.now(),
      });
      ctx.log.info({ size, attempt: ctx.attempt }, 'render started');
      await save(ctx, progress('running', 0));
      for (let step = 1; step <= size; step++) {
        // Rejects when the call is cancelled, passes its deadline or the service shuts down;
        // the runtime then answers (or requeues) for us.
        await sleep(o.stepMs, undefined, { signal: ctx.signal });
        ctx.log.info({ step, of: size }, 'render progress');
        // The framework's progress (in-flight record, console, CLI, MCP); the record below is the example's own.
        ctx.progress(step / size, `page ${step * 10} of ${size * 10}`);
        await save(ctx, progress(step === size ? 'done' : 'running', step));
      }
      const completion: Completion = { callId: ctx.callId, instanceId: ctx.instanceId, attempt: ctx.attempt, at: Date.now() };
      await o.store.append(completedStream(o.prefix), completion as unknown as Json).catch((err: unknown) => ctx.log.warn({ err }, 'completion not recorded'));
      const result: RenderResult = { report: `${title ?? 'report'}-${ctx.callId}`, size, pages: size * 10, renderedBy: ctx.instanceId, attempt: ctx.attempt, tookMs: Date.now() - startedAt };
      ctx.log.info({ tookMs: result.tookMs }, 'render finished');
      return result as unknown as JsonValue;
    },
  };

  const progress: ServiceMethod = {
    description: 'Progress of a report.render call by its call id: { callId } or [callId]; null when unknown or expired.',
    params: {
      oneOf: [
        { type: 'object', properties: { callId: { type: 'string', minLength: 1, maxLength: 150 } }, required: ['callId'], additionalProperties: false },
        { type: 'array', items: [{ type: 'string', minLength: 1, maxLength: 150 }], minItems: 1, maxItems: 1 },
      ],
    } satisfies JsonSchema,
    handler: async (params) => {
      const callId = Array.isArray(params) ? (params[0] as string) : (params as { callId: string }).callId;
      try {
        return ((await o.store.get(progressRecord(o.prefix, callId))) ?? null) as JsonValue;
      } catch (err) {
        // A call id outside the record-name alphabet was never recorded.
        if (err instanceof RangeError) return null;
        throw err;
      }
    },
  };

  return { 'report.render': render, 'report.progress': progress };
}
