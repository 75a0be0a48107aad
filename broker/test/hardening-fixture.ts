// What the gateway-hardening tests share (gateway-hardening.int.test.ts and
// gateway-hardening-access.int.test.ts, split by topic): one broker fixture per file with a
// `count` method that counts what reaches it, extra gateways closed after each test, and raw
// HTTP helpers that choose every header themselves.
import { connect } from 'node:net';
import { Teardown } from '@warren/testkit';
import { TestNamespace } from '../../test/support/amqp';
import type { RawResponse } from '../../test/support/hostile';
import { buildGateway, type Gateway, type GatewayOptions } from '../src';
import { startFixture, type Fixture } from './support';

/** One file's broker, registered with jest's hooks: call it at the top level of a test file. */
export interface HardeningSuite {
  readonly td: Teardown;
  readonly ns: TestNamespace;
  /** Closed after each test. */
  readonly perTest: Teardown;
  /** The broker fixture, set once beforeAll has run. */
  fixture(): Fixture;
  /** How many calls of `count` reached the service. */
  reached(): number;
  /** A second gateway on the broker's client, with other options, closed after the test. */
  gateway(options: GatewayOptions): Promise<{ g: Gateway; port: number; url: string }>;
}

export function hardeningSuite(): HardeningSuite {
  const td = new Teardown();
  const ns = new TestNamespace();
  const perTest = new Teardown();
  let reached = 0;
  let f: Fixture | undefined;
  beforeAll(async () => {
    td.add(() => ns.destroy());
    f = await startFixture(ns, td, {}, { count: { handler: () => ++reached } });
  });
  afterAll(() => td.run());
  // Each test's gateways close after it: every one listens to the broker's registry.
  afterEach(() => perTest.run());
  const fixture = (): Fixture => {
    if (f === undefined) throw new Error('the hardening fixture is used before beforeAll started it');
    return f;
  };
  return {
    td, ns, perTest, fixture,
    reached: () => reached,
    async gateway(options) {
      const { broker } = fixture();
      const g = await buildGateway({ client: broker.client, connection: broker.connection, registry: broker.registry }, { port: 0, defaultMetrics: false, ...options });
      perTest.add(() => g.close());
      const url = await g.listen();
      return { g, port: Number(new URL(url).port), url };
    },
  };
}


/** A raw HTTP/1.1 request with exactly these headers (Host included: the point is to choose it). */
export function request(method: string, target: string, headers: readonly (readonly [string, string])[], body = ''): string {
  const lines = [`${method} ${target} HTTP/1.1`, 'Connection: close', ...headers.map(([k, v]) => `${k}: ${v}`)];
  if (body.length > 0 || method === 'POST') lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}

export const countCall = '{"jsonrpc":"2.0","method":"count","id":1}';
export const json: [string, string] = ['Content-Type', 'application/json'];
export const initialize = (name = 'hardening'): string => JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name, version: '0' } } });

/**
 * Sends a request and resolves with its status, headers and whatever body came with them, then hangs up:
 * for answers that are event streams (a Streamable HTTP POST's), which do not end by themselves.
 */
export function head(port: number, raw: string, from?: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, ...(from === undefined ? {} : { localAddress: from }) });
    let seen = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      seen = Buffer.concat([seen, chunk]);
      const end = seen.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.destroy();
      const [statusLine = '', ...lines] = seen.subarray(0, end).toString('latin1').split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const i = line.indexOf(':');
        if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
      }
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1] ?? 0), headers, body: seen.subarray(end + 4) });
    });
    socket.on('error', reject);
    socket.write(raw);
  });
}

export function refusal(res: RawResponse): { code?: number; data?: { reason?: string; scope?: string } } {
  return (JSON.parse(res.body.toString()) as { error: { code?: number; data?: { reason?: string; scope?: string } } }).error;
}
