import type { CallInfo, JobStatus, JobStore } from '@warren/calls';
import type { CallStatus } from './record-codec';
import type { InflightView } from './view';

/**
 * The job store of `RpcClient.useJobStore` (@warren/calls' `JobStore`) over the in-flight store, in
 * Redis or in memory (docs/jobs.md). A job is a call, so its record is the call's record: reserving
 * an id is the queued mark (`SET NX`, atomic: of 100 enqueues of one id at once, one publishes), a
 * worker's claim turns it `running`, its finish stores the outcome, and the record lives until the
 * job's deadline plus `resultTtlMs` (tracker option, 5 min by default): that long an id stays taken
 * and `status` tells the outcome.
 *
 * @example
 * client.useJobStore(inflightJobStore(view));
 * const { id } = await client.enqueue('report.render', { size: 2 }, { jobId: 'report-7' });
 * await client.job(id); // { id: 'report-7', state: 'queued' | 'running' | 'done' | ..., response? }
 */
export function inflightJobStore(view: Pick<InflightView, 'reserveJob' | 'unmarkQueued' | 'status'>): JobStore {
  return {
    reserve: (job: CallInfo) => view.reserveJob(job),
    release: (jobId: string) => view.unmarkQueued(jobId).catch(() => undefined),
    status: async (jobId: string) => jobStatusOf(await view.status(jobId)),
  };
}

/** A call's status as a job's. */
function jobStatusOf(s: CallStatus): JobStatus {
  return {
    id: s.callId,
    state: s.state,
    ...(s.method === undefined ? {} : { method: s.method }),
    ...(s.service === undefined || s.service === '' ? {} : { service: s.service }),
    ...(s.worker === undefined ? {} : { worker: s.worker }),
    ...(s.attempt === undefined ? {} : { attempt: s.attempt }),
    ...(s.startedAt === undefined ? {} : { startedAt: s.startedAt }),
    ...(s.finishedAt === undefined ? {} : { finishedAt: s.finishedAt }),
    ...(s.deadline === undefined ? {} : { deadline: s.deadline }),
    ...(s.progress === undefined ? {} : { progress: s.progress }),
    ...(s.response === undefined ? {} : { response: s.response }),
  };
}
