import type { ResponseMessage } from '@warren/jsonrpc';
import type { CallInfo } from './call-info';
import type { Progress } from './progress';

/**
 * A job's state, as its job store reads it. A job is a call nobody waits for (enqueued), so its
 * record is the call's record: `queued` until a worker claims it, `running`, `retrying` (in a delay
 * queue for its next attempt), then `done`, `failed`, `cancelled` or `expired`; `unknown` when the
 * store has no record (never enqueued through this store, or no longer retained).
 */
export type JobState = 'unknown' | 'queued' | 'running' | 'retrying' | 'done' | 'failed' | 'cancelled' | 'expired';

/** One job by id: its state and, once finished, its outcome (`response`: the result or the error). */
export interface JobStatus {
  /** The job id: the call id (AMQP correlation id) its request carries. */
  readonly id: string;
  readonly state: JobState;
  readonly method?: string;
  readonly service?: string;
  /** The worker instance running it, or the last one that did. */
  readonly worker?: string;
  /** The attempt running or last run, from 1 (0 while queued). */
  readonly attempt?: number;
  /** Queued: when it was enqueued; otherwise when its current (or last) attempt started. ms since the epoch. */
  readonly startedAt?: number;
  readonly finishedAt?: number;
  /** Its deadline, ms since the epoch: it must have finished by then (its outcome is kept for a while past it). */
  readonly deadline?: number;
  /** The latest progress its handler reported. */
  readonly progress?: Progress;
  /** The outcome, once finished. */
  readonly response?: ResponseMessage;
}

/**
 * Where a client reserves the ids of the jobs it enqueues and reads their state: the port
 * `RpcClient.useJobStore` takes (@warren/inflight's `inflightJobStore(view)` implements it over the
 * in-flight store, in Redis or in memory). A reservation is the job's `queued` record, written only
 * if the id has none (atomically: of two reservations of one id at once, one wins), so a job id is
 * taken while its job is queued, running, or finished and retained.
 */
export interface JobStore {
  /**
   * Records `job` as queued unless its id already has a record: `true` when recorded (the caller may
   * publish it), `false` when the id is taken (a duplicate). Rejects when the store cannot answer.
   */
  reserve(job: CallInfo): Promise<boolean>;
  /** Drops a reservation whose job was not published, while it is still only that (best effort, never rejects). */
  release(jobId: string): Promise<void>;
  /** The job's state and outcome; rejects when the store cannot answer. */
  status(jobId: string): Promise<JobStatus>;
}
