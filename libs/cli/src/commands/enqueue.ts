import { RpcClient } from '@warren/amqp';
import { InflightError, inflightJobStore, InflightView } from '@warren/inflight';
import { wireErrorOf } from '@warren/jsonrpc';
import { ExitCode, UsageError, type ExitCodeValue } from '../errors';
import { GatewayCaller } from '../gateway-caller';
import { parseParams } from '../params';
import { delayFlags } from '../when';
import type { Session } from '../session';
import { reportError } from './call';
import { statusCommand } from './inflight';

export interface EnqueueFlags {
  /** The job id (de-duplicated while the job is queued, running or retained). */
  readonly id?: string;
  /** Time the job has to finish, from when it is due. */
  readonly timeout?: number;
  readonly at?: string;
  readonly in?: string;
}

/**
 * `warren enqueue <method> [params...]`: queues a job on the method's queue (docs/jobs.md): persistent,
 * confirmed by RabbitMQ, nobody waits for its answer; prints its id (and whether it was a duplicate).
 * A method no queue is bound for fails at once (-32601). Its id is reserved in the in-flight store
 * (Redis) when it answers, so `--id` de-duplicates and `warren job show` reads its state.
 */
export async function enqueueCommand(s: Session, method: string, words: readonly string[], flags: EnqueueFlags): Promise<ExitCodeValue> {
  const delay = delayFlags(flags);
  const params = parseParams(words);
  const [client, view] = await Promise.all([s.client(), s.view()]);
  if (!(client instanceof RpcClient) && !(client instanceof GatewayCaller)) throw new UsageError('enqueue needs RabbitMQ or the gateway');
  // Over RabbitMQ the job's id is reserved in Redis here; through the gateway (POST /jobs) the broker does it.
  if (view instanceof InflightView && client instanceof RpcClient) client.useJobStore(inflightJobStore(view));
  const options = { ...delay, ...(flags.id === undefined ? {} : { jobId: flags.id }), ...(flags.timeout === undefined ? {} : { timeoutMs: flags.timeout }) };
  try {
    const job = await client.enqueue(method, params, options).catch((err: unknown) => {
      // Redis away: a job without --id still goes (a tracked worker still runs one id once), told apart from a duplicate by nobody.
      if (!(err instanceof InflightError) || flags.id !== undefined || !(client instanceof RpcClient)) throw err;
      s.err(s.c.yellow(`warning: ${s.redisLabel} does not answer: the job is not recorded, so \`warren job show\` will not know it until a worker takes it`));
      client.useJobStore(undefined);
      return client.enqueue(method, params, options);
    });
    const due = job.dueAt === undefined ? undefined : new Date(job.dueAt).toISOString();
    if (s.settings.json) s.out(JSON.stringify({ id: job.id, duplicate: job.duplicate, method, ...(due === undefined ? {} : { dueAt: due }), deadline: new Date(job.deadline).toISOString(), ...(job.existing ? { state: job.existing.state } : {}) }));
    else if (job.duplicate) s.out(`${s.c.yellow('duplicate')} ${job.id}: already ${job.existing?.state ?? 'taken'}, not queued again`);
    else s.out(`${s.c.green('queued')} ${job.id}${due === undefined ? '' : ` (due ${due})`}`);
    return ExitCode.ok;
  } catch (err) {
    if (wireErrorOf(err) === undefined) throw err;
    return reportError(s, err);
  }
}

/** `warren job show <id>`: a job's state (queued, running, done, failed...) and outcome, from the in-flight store. */
export function jobShowCommand(s: Session, id: string): Promise<ExitCodeValue> {
  return statusCommand(s, id);
}
