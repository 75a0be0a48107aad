import { Header, protocolHeaderValue, protocolMinorHeader, protocolMinorHeaderValue } from '../wire/headers';
import { progressFlag, progressHeader } from '../wire/progress';

/**
 * Deadlines and send times are ms since the epoch (above 2^31), which amqplib writes as `l` already.
 *
 * The header tables of this client's publishes, one object each, refilled
 * for every publish. amqplib makes the headers object the prototype of one
 * of its own (`Object.create(options.headers)`); a new object per publish
 * turned into a prototype costs V8 more than the rest of the publish
 * (measured: 7-8 µs against 4.4 per publish). amqplib encodes the table
 * before `publish` returns (test: amqp/publish-headers), so refilling the
 * same object for the next publish is safe.
 */
export class PublishHeaders {
  private readonly request: Record<string, unknown> = { [Header.protocol]: protocolHeaderValue, [protocolMinorHeader]: protocolMinorHeaderValue, [Header.deadline]: 0, [Header.traceparent]: '', [Header.sentAt]: 0 };
  private readonly event: Record<string, unknown> = { [Header.protocol]: protocolHeaderValue, [protocolMinorHeader]: protocolMinorHeaderValue, [Header.traceparent]: '' };
  /** A second table for requests asking for progress, so neither table changes shape. */
  private readonly withProgress: Record<string, unknown> = { [Header.protocol]: protocolHeaderValue, [protocolMinorHeader]: protocolMinorHeaderValue, [Header.deadline]: 0, [Header.traceparent]: '', [progressHeader]: progressFlag, [Header.sentAt]: 0 };

  forRequest(deadline: number, traceparent: string, progress: boolean, tracestate: string | undefined): Record<string, unknown> {
    const table = progress ? this.withProgress : this.request;
    table[Header.deadline] = deadline;
    table[Header.traceparent] = traceparent;
    table[Header.sentAt] = Date.now();
    // A trace state is rare: a copy that carries it keeps the shared tables' shape (and their speed) for the rest.
    return tracestate === undefined ? table : { ...table, [Header.tracestate]: tracestate };
  }

  forEvent(traceparent: string, tracestate: string | undefined): Record<string, unknown> {
    this.event[Header.traceparent] = traceparent;
    return tracestate === undefined ? this.event : { ...this.event, [Header.tracestate]: tracestate };
  }
}
