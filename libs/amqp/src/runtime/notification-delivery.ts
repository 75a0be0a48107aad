import type { WireChannel, WireMessage } from '@warren/amqp-transport';
import { decode, type Decoded, type NotificationMessage } from '@warren/jsonrpc';
import { CallAbort } from './call-abort';
import { callContext, type PipelineDeps } from './request-pipeline';
import { inSpan, tracedDelivery, type TracedDelivery } from './server-span';
import { activeTracer } from '../tracing/tracer';
import { readDelivery } from '../wire/delivery';

/**
 * Handles a delivery from one of the service's event queues: its notifications run one after
 * another, nothing is answered, the delivery is acked once they ran.
 */
export async function handleNotifications(d: PipelineDeps, ch: WireChannel, msg: WireMessage): Promise<void> {
  const { o, settlement } = d;
  const info = readDelivery(msg, o.defaultTimeoutMs);
  const messages = notificationsIn(decode(msg.content, d.limits));
  if (messages.length === 0) d.log.warn({ callId: info.callId }, 'event queue received something that is not a notification; dropped');
  const abort = new CallAbort();
  d.running.set(msg, abort);
  // Held back (not run) while a suspect runs alone; given back if the service shuts down meanwhile.
  const entry = o.tracker ? d.lane.enter(abort) : false;
  const laned = typeof entry === 'boolean' ? entry : await entry;
  try {
    if (o.tracker && !laned) return settlement.settle(ch, msg, 'requeue');
    for (const message of messages) {
      // Tracing on: a consumer span per notification, active around its handler (nested calls are its children).
      const tracer = activeTracer();
      const delivery: TracedDelivery = tracer ? tracedDelivery(tracer, info, { method: message.method, service: o.name, instanceId: o.instanceId, queue: msg.fields.exchange, notification: true }, Date.now()) : info;
      const ctx = callContext(d.owner, message, delivery, info.attempt, abort);
      try {
        await (delivery.span ? inSpan(delivery.span, () => d.dispatcher.handleNotification(message, ctx)) : d.dispatcher.handleNotification(message, ctx));
      } finally {
        delivery.span?.end();
      }
      // A notification's progress has no caller; a held-back report still goes to the tracker now, not after.
      ctx.endProgress();
      d.counters.notified++;
    }
    settlement.settle(ch, msg, 'ack');
  } finally {
    if (laned) d.lane.leave();
    d.running.delete(msg);
  }
}

function notificationsIn(decoded: Decoded): NotificationMessage[] {
  const items = decoded.kind === 'single' ? [decoded.item] : decoded.kind === 'batch' ? decoded.items : [];
  return items.flatMap((i) => (i.kind === 'notification' ? [i.message] : []));
}
