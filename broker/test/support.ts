// Shared by the broker's integration tests: in-test services serving the
// example methods and the `calculate` tool, a broker in a namespace of the
// test file's own, and small readers for SSE streams and Prometheus text.
import { startService, type ServiceMethod, type WarrenService } from '@warren/amqp';
import { InvalidParamsError } from '@warren/jsonrpc';
import { amqpUrl, waitFor, type Teardown } from '@warren/testkit';
import { ExpressionError, evaluate, formatResult } from '../../services/calculator/src/expression';
import { exampleMethods, exampleNotifications } from '../../test/support/example-methods';
import type { TestNamespace } from '../../test/support/amqp';
import { startBroker, type Broker, type BrokerOptions } from '../src';

/** The `calculate` tool of the design notes: text is formatResult(evaluate(expression)). */
export const calculate: ServiceMethod = {
  description: 'Evaluates an arithmetic expression.',
  params: { type: 'object', properties: { expression: { type: 'string', description: 'e.g. 1+3+6' } }, required: ['expression'], additionalProperties: false },
  result: { type: 'string' },
  tool: { description: 'Evaluate an arithmetic expression with + - * / % and parentheses.' },
  handler: (params) => {
    try {
      return formatResult(evaluate((params as { expression: string }).expression));
    } catch (err) {
      // The expression's own problem, worded for the user: the tool shows it verbatim.
      if (err instanceof ExpressionError) throw new InvalidParamsError(err.message);
      throw err;
    }
  },
};

/** Waits `ms` (or until the call is aborted); for deadline and overload tests. */
export const sleep: ServiceMethod = {
  params: { type: 'array', items: { type: 'integer', minimum: 0 }, minItems: 1, maxItems: 1 },
  handler: (params, ctx) =>
    new Promise<string>((resolve) => {
      const timer = setTimeout(() => resolve('slept'), (params as [number])[0]);
      ctx.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve('aborted');
      }, { once: true });
    }),
};

export interface Fixture {
  readonly broker: Broker;
  readonly url: string;
  readonly services: WarrenService[];
  readonly notified: string[];
}

/**
 * Starts a broker (listening on an ephemeral port) and then the services, so
 * the broker's registry hears their first announcement, and waits until it
 * knows every method.
 */
export async function startFixture(ns: TestNamespace, td: Teardown, options: Partial<BrokerOptions> = {}, extraMethods: Record<string, ServiceMethod> = {}): Promise<Fixture> {
  const urls = amqpUrl();
  const broker = await startBroker({ urls, namespace: ns.namespace, serviceName: ns.service('warren-broker'), port: 0, defaultMetrics: false, ...options });
  td.add(() => broker.close());
  const url = await broker.listen();
  const notified: string[] = [];
  const services = [
    await startService({ urls, namespace: ns.namespace, name: ns.service('examples'), methods: { ...exampleMethods, sleep, ...extraMethods } }),
    await startService({ urls, namespace: ns.namespace, name: ns.service('example-events'), notifications: exampleNotifications((m) => notified.push(m)) }),
    await startService({ urls, namespace: ns.namespace, name: ns.service('calculator'), methods: { calculate } }),
  ];
  for (const s of services) td.add(() => s.close());
  const expected = ['add', 'subtract', 'sum', 'get_data', 'fail', 'sleep', 'calculate', ...Object.keys(extraMethods)];
  await waitFor(() => expected.every((m) => broker.gateway.catalogue.current().methods.has(m)), { message: 'registry knows every method' });
  // The broker's own first discovery round (and so /readyz) may end after the services' announcements arrived.
  await broker.registry.discovered();
  return { broker, url, services, notified };
}

/** POSTs a body to /rpc. */
export function postRpc(url: string, body: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
}

export interface SseEvent {
  readonly event: string;
  readonly data: string;
}

/** Reads server-sent events off a fetch response, one at a time. */
export class SseReader {
  private buffer = '';
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly decoder = new TextDecoder();

  constructor(response: Response) {
    if (!response.body) throw new Error('response has no body');
    this.reader = response.body.getReader();
  }

  /** The next event (comment lines skipped); rejects after `timeoutMs` or when the stream ends. */
  async next(timeoutMs = 5000): Promise<SseEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const end = this.buffer.indexOf('\n\n');
      if (end >= 0) {
        const block = this.buffer.slice(0, end);
        this.buffer = this.buffer.slice(end + 2);
        const lines = block.split('\n').filter((l) => !l.startsWith(':'));
        if (lines.length === 0) continue;
        const event = lines.find((l) => l.startsWith('event:'))?.slice(6).trim() ?? 'message';
        const data = lines.filter((l) => l.startsWith('data:')).map((l) => l.slice(5).replace(/^ /, '')).join('\n');
        return { event, data };
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no SSE event within ${timeoutMs} ms; buffered: ${JSON.stringify(this.buffer)}`);
      let timer: NodeJS.Timeout | undefined;
      const chunk = await Promise.race([
        this.reader.read(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no SSE event within ${timeoutMs} ms`)), left);
        }),
      ]).finally(() => clearTimeout(timer));
      if (chunk.done) throw new Error('SSE stream ended');
      this.buffer += this.decoder.decode(chunk.value, { stream: true });
    }
  }

  async cancel(): Promise<void> {
    await this.reader.cancel().catch(() => undefined);
  }
}

/** Samples of a Prometheus text exposition: `name{labels}` → value. */
export function parseMetrics(text: string): { samples: Map<string, number>; types: Map<string, string> } {
  const samples = new Map<string, number>();
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type?.[1] && type[2]) types.set(type[1], type[2]);
    if (line.length === 0 || line.startsWith('#')) continue;
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{.*\})?) (\S+)$/.exec(line);
    if (!sample?.[1] || sample[2] === undefined) throw new Error(`unparseable metrics line: ${line}`);
    samples.set(sample[1], Number(sample[2]));
  }
  return { samples, types };
}
