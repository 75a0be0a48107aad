import { idText, isErrorResponse } from '@warren/jsonrpc';
import { delayedMethods, inflightJobStore, inflightMethods, inflightNotifications, trackDelayed, trackQueued, type InflightCall, type InflightView } from '@warren/inflight';
import type { Logger } from '@warren/logger';
import type { Broker, BrokerOptions } from './broker';

/**
 * What an in-flight view gives the broker, whichever store it reads (Redis, or memory in embedded
 * mode): GET /inflight, the inflight.list/status/cancel/workers methods and $/cancelRequest,
 * relayed calls marked `queued` until a worker takes them, and delayed.list/cancel over the
 * delayed calls it relays. `options` goes into startBroker;
 * `attach` is called with the started broker, whose client publishes the wire cancel.
 */
export function inflightWiring(view: InflightView): {
  readonly options: Pick<BrokerOptions, 'inflight' | 'serviceMethods' | 'serviceNotifications'>;
  attach(broker: Broker, logger: Logger): void;
} {
  // inflight.cancel also publishes the cancel on RabbitMQ, through the broker's client once it exists.
  const wire: { cancel?: (callId: string, deadline?: number) => Promise<void>; serviceOf?: (method: string) => string | undefined } = {};
  // A call its AMQP caller marked queued names no service (a client sends to a method): the catalogue knows it.
  const named = (calls: readonly InflightCall[]): InflightCall[] => calls.map((c) => (c.service !== '' ? c : { ...c, service: wire.serviceOf?.(c.method) ?? '' }));
  return {
    options: {
      inflight: { list: () => view.list().then(named), status: (callId) => view.status(callId) },
      serviceMethods: {
        ...inflightMethods(view, { cancelOnWire: (id) => wire.cancel?.(id) ?? Promise.resolve() }),
        // delayed.list / delayed.cancel: the delayed calls this broker relayed (docs/scheduling.md, "Delayed calls").
        ...delayedMethods(view, { cancelOnWire: (id, deadline) => wire.cancel?.(id, deadline) ?? Promise.resolve() }),
      },
      serviceNotifications: inflightNotifications(view),
    },
    attach(broker, logger) {
      wire.cancel = (id, deadline) => broker.client.cancelOnWire(id, 'inflight.cancel', deadline);
      wire.serviceOf = (method) => broker.gateway.catalogue.current().methods.get(method)?.service;
      // Calls relayed through the gateway read as `queued` (not `unknown`) in inflight.status until a worker takes them.
      // The gateway knows which services track their calls: it drops the marks of the others' answered calls itself (recordUntracked).
      // Its own methods (inflight.*, dlq.*, ...) are left out: the broker's service tracks nothing, so a
      // mark would stay `queued` until the deadline (and be listed in In flight all that time).
      const catalogue = broker.gateway.catalogue;
      // POST /jobs reserves job ids in the same store (docs/jobs.md: de-duplication, state by id).
      broker.client.useJobStore(inflightJobStore(view));
      trackQueued(broker.client, view, logger, { untrackedAnswers: false, mark: (call) => catalogue.current().methods.get(call.method)?.service !== broker.service.name });
      recordUntracked(broker, view, logger);
      // Delayed calls relayed through the gateway are listed until due, with their service and the token that sent them.
      trackDelayed(broker.client, view.delayed, {
        service: (method) => broker.gateway.catalogue.current().methods.get(method)?.service,
        principal: (callId) => broker.gateway.calls.ownerOf(callId)?.toString(),
        log: logger,
      });
    },
  };
}

/**
 * The outcome history holds what tracked workers finish (their finish script writes it, once per call).
 * A call this gateway relays to a service none of whose instances tracks its calls (no tracker, or
 * Redis away: `tracking` not `tracking`) has no such writer: the gateway records it, so it lands once
 * too, and drops its queued mark, which no claim replaced. The broker's own methods (the console's history.list, calls.show, ...) are left out: reading
 * the history must not fill it. A call refused before it was relayed (authorization, overload) is not
 * a call of any service.
 */
function recordUntracked(broker: Broker, view: InflightView, logger: Logger): void {
  const log = logger.child({ component: 'history' });
  broker.gateway.calls.onSettled((call, _ms, _code, response) => {
    if (response === undefined) return;
    const service = broker.gateway.catalogue.current().methods.get(call.method)?.service ?? '';
    const instances = broker.registry.list().filter((i) => i.service === service);
    if (instances.some((i) => i.tracking?.state === 'tracking' || i.metadata?.['role'] === 'broker')) return;
    // No tracked worker claimed it, so its queued mark (trackQueued) would read `queued` until the deadline.
    view.unmarkQueued(call.callId).catch((err: unknown) => log.debug({ err, callId: call.callId }, 'queued mark not dropped (in-flight store unavailable)'));
    const error = isErrorResponse(response) ? response.error : undefined;
    view.recordOutcome({ callId: call.callId, service, method: call.method, startedAt: call.startedAt, finishedAt: Date.now(), rid: idText(call.id ?? null), ...(error === undefined ? {} : { error }) })
      .catch((err: unknown) => log.debug({ err, callId: call.callId }, 'outcome not recorded (in-flight store unavailable)'));
  });
}
