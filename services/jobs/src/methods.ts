// The jobs service's handlers: `report.render`, a long-running job whose
// length is set by its `size`, reporting its progress through `ctx.progress`
// (stored on the call's in-flight record, pushed to callers that ask), and
// `report.progress`, which reads a running or finished job's progress by call
// id from the in-flight store, so any instance can answer for a job another runs.
import { setTimeout as sleep } from 'node:timers/promises';
import { Type, type Static } from '@sinclair/typebox';
import { defineMethod, type ServiceMethod } from '@warren/amqp';
import type { EventStore } from '@warren/eventlog';
import type { CallState, CallStatus } from '@warren/inflight';

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

/** Every in-flight state `report.progress` can answer ('unknown' answers null); the check below keeps it complete. */
const answeredStates = ['queued', 'retrying', 'running', 'done', 'failed', 'cancelled', 'expired'] as const satisfies readonly Exclude<CallState, 'unknown'>[];
// Fails to compile when @warren/inflight gains a state this list lacks.
const allStatesAnswered: [Exclude<CallState, 'unknown' | (typeof answeredStates)[number]>] extends [never] ? true : never = true;
void allStatesAnswered;

/** A job's progress, as `report.progress` answers it (from its in-flight record). */
export const jobProgress = Type.Object({
  callId: Type.String(),
  state: Type.Union(answeredStates.map((state) => Type.Literal(state))),
  percent: Type.Integer({ minimum: 0, maximum: 100, description: 'From the last ctx.progress (100 once done).' }),
  message: Type.Optional(Type.String()),
  worker: Type.Optional(Type.String()),
  attempt: Type.Optional(Type.Integer()),
  updatedAt: Type.Optional(Type.Integer({ description: 'When the last progress was reported, ms since the epoch.' })),
});
export type JobProgress = Static<typeof jobProgress>;

export const renderResult = Type.Object({
  report: Type.String(),
  size: Type.Integer(),
  pages: Type.Integer(),
  renderedBy: Type.String(),
  attempt: Type.Integer(),
  tookMs: Type.Integer(),
});
export type RenderResult = Static<typeof renderResult>;

/** One entry per job finished, in `<prefix>.completed`: what the kill test counts. A type alias, so it is plain JSON to the store. */
export type Completion = {
  readonly callId: string;
  readonly instanceId: string;
  readonly attempt: number;
  readonly at: number;
};

const callId = Type.String({ minLength: 1, maxLength: 150 });

export const jobsDefaults = { stepMs: 1000, maxSize: 600 } as const;

export function completedStream(prefix: string): string {
  return `${prefix}.completed`;
}

export function jobsMethods(options: JobsOptions): Record<string, ServiceMethod> {
  const o = { ...jobsDefaults, ...options };

  const render = defineMethod(
    {
      // Announced: /services, rpc.discover and `warren services` tell callers to send it persistent.
      jobStyle: true,
      description: 'Renders a report; takes `size` steps of the configured step time (1 s by default), reporting progress (ctx.progress) after each.',
      params: Type.Object(
        {
          size: Type.Integer({ minimum: 1, maximum: o.maxSize, description: 'How many steps the job takes.' }),
          title: Type.Optional(Type.String({ maxLength: 200 })),
        },
        { additionalProperties: false },
      ),
      result: renderResult,
    },
    async ({ size, title }, ctx) => {
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
      await o.store.append(completedStream(o.prefix), completion).catch((err: unknown) => ctx.log.warn({ err }, 'completion not recorded'));
      const result: RenderResult = { report: `${title ?? 'report'}-${ctx.callId}`, size, pages: size * 10, renderedBy: ctx.instanceId, attempt: ctx.attempt, tookMs: Date.now() - startedAt };
      ctx.log.info({ tookMs: result.tookMs }, 'render finished');
      return result;
    },
  );

  const progress = defineMethod(
    {
      description: 'Progress of a report.render call by its call id, from the in-flight store: { callId } or [callId]; null when unknown or expired.',
      params: Type.Union([Type.Object({ callId }, { additionalProperties: false }), Type.Tuple([callId])]),
      result: Type.Union([jobProgress, Type.Null()]),
    },
    async (params) => {
      const id = Array.isArray(params) ? params[0] : params.callId;
      const status = await o.status(id);
      if (status.state === 'unknown') return null;
      const p = status.progress;
      return {
        callId: id,
        state: status.state,
        percent: status.state === 'done' ? 100 : Math.floor((p?.fraction ?? 0) * 100),
        ...(p?.message === undefined ? {} : { message: p.message }),
        ...(status.worker === undefined ? {} : { worker: status.worker }),
        ...(status.attempt === undefined ? {} : { attempt: status.attempt }),
        ...(p === undefined ? {} : { updatedAt: p.at }),
      };
    },
  );

  return { 'report.render': render, 'report.progress': progress };
}
