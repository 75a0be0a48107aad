// A service's queue as RabbitMQ reports it (GET /services `queue`), in the Services view: what waits,
// what is being worked on, how fast messages move, what is retrying and what was given up.
import { duration } from '../format';
import { href } from '../route';
import type { QueueFigures, ServicesResponse } from '../types';

/** Says where the figures come from: the management API, or passive declares (fewer figures), and why. */
export function QueueSource(props: { source: ServicesResponse['queueSource'] }) {
  const s = props.source;
  if (!s) return null;
  if (s.source === 'management') return <span class="queue-source" data-queue-source="management">Queue figures: RabbitMQ management API</span>;
  return (
    <span class="queue-source" data-queue-source="amqp" title={s.fallbackReason === undefined ? 'Set RABBITMQ_MANAGEMENT_URL for unacked messages, rates and retry queues' : `The management API failed: ${s.fallbackReason}`}>
      Queue figures: AMQP passive declares (ready, consumers, dead letters){s.fallbackReason === undefined ? '' : ' · management API not answering'}
    </span>
  );
}

const perSec = (n: number | undefined): string => (n === undefined ? '–' : `${n}/s`);

/** One row of figures; a dash where the source cannot tell. */
export function QueueTable(props: { service: string; queue: QueueFigures }) {
  const q = props.queue;
  const retrying = q.retry?.reduce((n, r) => n + r.messages, 0);
  return (
    <div class="table-scroll">
      <table class="grid compact queue" aria-label={`Queue of ${props.service}`} data-queue={props.service}>
        <thead>
          <tr>
            <th scope="col" class="num" title="Requests waiting for a worker (every caller's, gateway and AMQP)">Ready</th>
            <th scope="col" class="num" title="Delivered to a worker, not yet acked">Unacked</th>
            <th scope="col" class="num">Consumers</th>
            <th scope="col" class="num" title="Published to the queue">In</th>
            <th scope="col" class="num" title="Delivered to workers">Out</th>
            <th scope="col" class="num" title="Acked by workers">Acked</th>
            <th scope="col" class="num" title="Waiting out a retry backoff in the delay queues">Retrying</th>
            <th scope="col" class="num" title="Messages in its dead-letter queue">Dead</th>
          </tr>
        </thead>
        <tbody>
          <tr>
            <td class="num" data-fig="ready">{q.messages}</td>
            <td class="num" data-fig="unacked">{q.unacked ?? '–'}</td>
            <td class="num" data-fig="consumers">{q.consumers}</td>
            <td class="num" data-fig="publish">{perSec(q.rates?.publish)}</td>
            <td class="num" data-fig="deliver">{perSec(q.rates?.deliver)}</td>
            <td class="num" data-fig="ack">{perSec(q.rates?.ack)}</td>
            <td class="num" data-fig="retry" title={q.retry?.map((r) => `${r.messages} waiting ${duration(r.delayMs)}`).join(', ')}>{retrying ?? '–'}</td>
            <td class="num" data-fig="dead">{q.deadLetters === undefined ? '–' : q.deadLetters > 0 ? <a href={href('dead-letters', [], { service: props.service })}>{q.deadLetters}</a> : 0}</td>
          </tr>
        </tbody>
      </table>
    </div>
  );
}
