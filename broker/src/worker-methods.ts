import { names, publishWorkerControl, type InstanceInfo, type ServiceMethod, type WorkerAction, type WorkerReport } from '@warren/amqp';
import { type WireConnection } from '@warren/amqp-transport';
import { InvalidParamsError, ServiceUnavailableError, type JsonSchema, type JsonValue } from '@warren/jsonrpc';

/** What the worker controls need: the connection to publish on, and the live registry to find instances and hear their echo. */
export interface WorkerControlDeps {
  readonly connection: Pick<WireConnection, 'model'>;
  readonly registry: {
    list(): readonly InstanceInfo[];
    on(event: 'change', listener: () => void): unknown;
    off(event: 'change', listener: () => void): unknown;
  };
  readonly namespace?: string;
  /** How long a control waits for the instance to announce it applied it. @default 5000 */
  readonly confirmMs?: number;
}

const target: JsonSchema = {
  type: 'object',
  properties: {
    instanceId: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$' },
    service: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$' },
  },
  required: ['instanceId'],
  additionalProperties: false,
};

/** What every control answers: whether the instance said it applied it, and how it stands now. */
export interface ControlAnswer {
  readonly service: string;
  readonly instanceId: string;
  readonly action: WorkerAction;
  /** The instance announced it applied this very request (false: not heard within `confirmMs`). */
  readonly applied: boolean;
  /** `cancelAll`: the calls it aborted. */
  readonly cancelled?: number;
  readonly worker?: WorkerReport;
}

const methods: readonly (readonly [string, WorkerAction, string])[] = [
  ['workers.pause', 'pause', 'Stops one worker instance consuming: its calls wait in the queue (or go to other instances) until resumed. A restart forgets it.'],
  ['workers.resume', 'resume', 'Lets a paused worker instance consume again.'],
  ['workers.drain', 'drain', 'One worker instance takes no new call, finishes its running ones, then withdraws and stops.'],
  ['workers.cancelAll', 'cancel-all', 'Cancels every call running on one worker instance; each caller is answered -32003.'],
];

/**
 * The worker controls as broker methods (docs/gateway-operators.md, "Worker controls"; operator tokens only,
 * authz.ts): `workers.pause | resume | drain | cancelAll {instanceId, service?}` → {@link ControlAnswer}.
 * Each is published to the instance's own control queue (wire/worker-control.ts) and answered when
 * the instance's next announcement echoes it.
 */
export function workerMethods(deps: WorkerControlDeps): Record<string, ServiceMethod> {
  const n = names(deps.namespace);
  const confirmMs = deps.confirmMs ?? 5000;
  const control = async (params: unknown, action: WorkerAction): Promise<JsonValue> => {
    const instance = findInstance(deps.registry.list(), params as { instanceId: string; service?: string });
    const model = deps.connection.model;
    if (!model) throw new ServiceUnavailableError(undefined, { reason: 'not_connected' });
    const ch = await model.createChannel();
    const echo = waitForEcho(deps.registry, instance, confirmMs);
    let requestId: string;
    try {
      requestId = publishWorkerControl(ch, n, instance.service, instance.instanceId, action);
    } catch (err) {
      echo.cancel();
      throw err;
    } finally {
      // Closing waits for the publish to be written.
      await ch.close().catch(() => undefined);
    }
    const heard = await echo.until(requestId);
    const answer: ControlAnswer = {
      service: instance.service,
      instanceId: instance.instanceId,
      action,
      applied: heard !== undefined,
      ...(heard?.lastControl?.cancelled === undefined ? {} : { cancelled: heard.lastControl.cancelled }),
      ...(heard === undefined ? {} : { worker: heard }),
    };
    return JSON.parse(JSON.stringify(answer)) as JsonValue;
  };
  return Object.fromEntries(methods.map(([name, action, description]) => [name, { description: `${description} {instanceId, service?}`, params: target, handler: (p: unknown) => control(p, action) }]));
}

/** The live instance named; -32602 when there is none, when two services have an instance of that id and none was named, or for a broker's own instance. */
function findInstance(list: readonly InstanceInfo[], p: { instanceId: string; service?: string }): InstanceInfo {
  const found = list.filter((i) => i.instanceId === p.instanceId && (p.service === undefined || i.service === p.service));
  if (found.length === 0) throw new InvalidParamsError(undefined, { reason: 'no_such_worker', instanceId: p.instanceId, ...(p.service === undefined ? {} : { service: p.service }) });
  if (found.length > 1) throw new InvalidParamsError(undefined, { reason: 'ambiguous_worker', instanceId: p.instanceId, services: found.map((i) => i.service) });
  const [one] = found;
  if (!one) throw new InvalidParamsError(undefined, { reason: 'no_such_worker', instanceId: p.instanceId });
  // A paused broker could not serve the resume: its own instances are not workers to steer.
  if (one.metadata['role'] === 'broker') throw new InvalidParamsError(undefined, { reason: 'broker_instance', instanceId: p.instanceId });
  return one;
}

/**
 * Listens to the registry from before the publish (an instance may answer within a millisecond) and
 * resolves with the instance's report once it echoes `requestId`, or undefined after `ms`. A drained
 * instance withdraws right after its echo; a withdraw seen after the echo is no failure.
 */
function waitForEcho(registry: WorkerControlDeps['registry'], instance: InstanceInfo, ms: number): { until(requestId: string): Promise<WorkerReport | undefined>; cancel(): void } {
  let wanted: string | undefined;
  let settle: ((report: WorkerReport | undefined) => void) | undefined;
  let seen: WorkerReport | undefined;
  const check = (): void => {
    const now = registry.list().find((i) => i.service === instance.service && i.instanceId === instance.instanceId);
    if (now?.worker?.lastControl !== undefined && now.worker.lastControl.requestId === wanted) seen = now.worker;
    if (seen !== undefined) settle?.(seen);
  };
  registry.on('change', check);
  return {
    cancel: () => void registry.off('change', check),
    until(requestId) {
      wanted = requestId;
      return new Promise<WorkerReport | undefined>((resolve) => {
        const timer = setTimeout(() => settle?.(undefined), ms);
        settle = (report) => {
          clearTimeout(timer);
          registry.off('change', check);
          settle = undefined;
          resolve(report);
        };
        check();
      });
    },
  };
}
