import type { WorkerAction, WorkerReport } from '@warren/amqp';
import { ExitCode, type ExitCodeValue } from '../errors';
import type { Session } from '../session';
import { callBroker, failed } from './broker-call';

/** The broker method of each `warren worker` command. */
const methodOf: Readonly<Record<WorkerAction, string>> = { pause: 'workers.pause', resume: 'workers.resume', drain: 'workers.drain', 'cancel-all': 'workers.cancelAll' };

interface ControlAnswer {
  readonly service: string;
  readonly instanceId: string;
  readonly applied: boolean;
  readonly cancelled?: number;
  readonly worker?: WorkerReport;
}

/**
 * `warren worker pause|resume|drain|cancel-all <instance> [--service s]`: one worker control through
 * the broker (operator only). Exits 1 when the instance did not say it applied it within the
 * broker's wait.
 */
export async function workerCommand(s: Session, action: WorkerAction, instanceId: string, flags: { service?: string }): Promise<ExitCodeValue> {
  const answer = await callBroker<ControlAnswer>(s, methodOf[action], { instanceId, service: flags.service }, 'worker controls are served by the broker: is one running in this namespace?');
  if (failed(answer)) return answer;
  if (s.settings.json) s.out(JSON.stringify(answer));
  else if (!answer.applied) s.err(s.c.yellow(`${action} sent to ${answer.service}/${answer.instanceId}, but it did not say it applied it`));
  else s.out(`${s.c.green(action)} ${answer.service}/${answer.instanceId}${answer.cancelled === undefined ? '' : `  cancelled ${answer.cancelled}`}${answer.worker?.paused === true ? '  (paused)' : ''}${answer.worker?.draining === true ? '  (draining)' : ''}`);
  return answer.applied ? ExitCode.ok : ExitCode.error;
}
