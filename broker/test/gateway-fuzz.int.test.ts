// fast-check fuzz of the HTTP gateway against a real broker and real
// services over RabbitMQ: bodies, headers, query strings, paths, SSE session
// ids, /mcp session headers, and broken HTTP framing. Every answer must be a
// documented status with a well-formed body (JSON-RPC where docs/gateway.md
// says so, with the code the specification requires for malformed input);
// nothing may crash, log an error or leave an unhandled rejection; and a
// normal call must still succeed after every property.
import fc from 'fast-check';
import { ErrorCode } from '@warren/jsonrpc';
import { Teardown } from '@warren/testkit';
import { TestNamespace } from '../../test/support/amqp';
import { buildGateway } from '../src';
import {
  assertResponse, expectFor, httpRequest, matchAll, memoryLogger, payloads, rawHttp, routable, trickyMethodNames, watchUnhandledRejections,
  type Id, type ItemExpectation, type PayloadExpectation, type RawResponse, type WireResponse,
} from '../../test/support/hostile';
import { startFixture, type Fixture } from './support';

/** Runs per property; the report quotes these. */
export const runs = { bodies: 400, headers: 300, auth: 200, paths: 300, sseSessions: 300, mcpSessions: 300, framing: 200 } as const;

const td = new Teardown();
const ns = new TestNamespace();
const log = memoryLogger('warn');
const token = 'fuzz-token-6b0f2a';
let f: Fixture;
let port: number;
let authPort: number;
let unhandled: ReturnType<typeof watchUnhandledRejections>;

beforeAll(async () => {
  unhandled = watchUnhandledRejections();
  td.add(() => ns.destroy());
  f = await startFixture(ns, td, { defaultTimeoutMs: 2000, maxTimeoutMs: 2000, logger: log.logger });
  port = Number(new URL(f.url).port);
  // A second gateway on the same client, with auth on.
  const authed = await buildGateway({ client: f.broker.client, connection: f.broker.connection, registry: f.broker.registry }, { port: 0, tokens: [token], defaultMetrics: false, logger: log.logger });
  td.add(() => authed.close());
  authPort = Number(new URL(await authed.listen()).port);
});

afterAll(async () => {
  await td.run();
  unhandled.stop();
});

afterEach(async () => {
  // The process keeps serving: a normal call after every property.
  const res = await post('/rpc', [['Content-Type', 'application/json']], '{"jsonrpc":"2.0","method":"add","params":[20,22],"id":"after"}');
  expect(res.status).toBe(200);
  expect(JSON.parse(res.body.toString())).toEqual({ jsonrpc: '2.0', result: 42, id: 'after' });
  expect(unhandled.seen).toEqual([]);
  // No request ended in WARREN_GW_INTERNAL or any other error-level line.
  expect(log.entries().filter((e) => Number(e['level']) >= 50)).toEqual([]);
});

function post(target: string, headers: readonly (readonly [string, string])[], body: Buffer | string, to = port): Promise<RawResponse> {
  return rawHttp(to, httpRequest('POST', target, headers, body));
}

function json(res: RawResponse): unknown {
  try {
    return JSON.parse(res.body.toString('utf8'));
  } catch {
    throw new Error(`status ${res.status} with a body that is not JSON: ${JSON.stringify(res.body.toString('latin1').slice(0, 300))}`);
  }
}

/** A refusal from docs/gateway.md: that status, a JSON-RPC error with id null, that code and `data.reason`. */
function expectRefusal(res: RawResponse, status: number, code: number, reason: string): void {
  expect({ status: res.status, reason }).toEqual({ status, reason });
  const body = json(res);
  assertResponse(body);
  expect(body).toMatchObject({ id: null, error: { code, data: { reason } } });
}

// ---------------------------------------------------------------------------
// Generators.

const knownMethods = ['add', 'subtract', 'sum', 'get_data', 'fail', 'calculate', 'rpc.discover'];
const methodName = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...knownMethods) },
  { weight: 3, arbitrary: fc.constantFrom(...trickyMethodNames(ns.namespace)) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
);
const bodies = payloads(methodName);

// ---------------------------------------------------------------------------
// Checking answers against the oracle.

/** What the gateway must answer for a request: routing-key rules, then the example services' methods. */
function callAnswered(r: WireResponse, e: Extract<ItemExpectation, { kind: 'call' }>): boolean {
  if (!routable(e.method)) return r.error?.code === ErrorCode.InvalidRequest;
  if (!knownMethods.includes(e.method)) return r.error?.code === ErrorCode.MethodNotFound;
  if (e.method === 'add' && Array.isArray(e.params) && e.params.length === 2 && e.params.every((n) => Number.isSafeInteger(n))) {
    return r.result === (e.params[0] as number) + (e.params[1] as number);
  }
  // Another known method with whatever params: its result, or -32602 from its schema.
  return r.error === undefined || r.error.code === ErrorCode.InvalidParams;
}

function checkRpcAnswer(res: RawResponse, expected: PayloadExpectation, sent: Buffer): void {
  const items = (expected.kind === 'single' ? [expected.item] : expected.items).filter((i) => i.kind !== 'nothing');
  const context = `for body ${JSON.stringify(sent.toString('latin1').slice(0, 400))}`;
  if (items.length === 0) {
    expect({ status: res.status, body: res.body.length, context }).toEqual({ status: 204, body: 0, context });
    return;
  }
  expect({ status: res.status, context }).toEqual({ status: 200, context });
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const body = json(res);
  if (expected.kind === 'single') {
    assertResponse(body);
    if (!matchAll([body], items, callAnswered)) throw new Error(`wrong answer ${JSON.stringify(body).slice(0, 400)} ${context}; expected ${JSON.stringify(items)}`);
  } else {
    if (!Array.isArray(body)) throw new Error(`a batch answered with a non-array ${context}`);
    for (const r of body) assertResponse(r);
    if (!matchAll(body as WireResponse[], items, callAnswered)) throw new Error(`wrong batch answer ${JSON.stringify(body).slice(0, 600)} ${context}; expected ${JSON.stringify(items)}`);
  }
}

// ---------------------------------------------------------------------------

describe('POST /rpc bodies', () => {
  it(`answers every body with the JSON-RPC response the specification requires (${runs.bodies} runs)`, async () => {
    const seen = { relayed: 0, routed: 0, parseError: 0, invalid: 0, batch: 0, silent: 0 };
    await fc.assert(
      fc.asyncProperty(bodies, async (body) => {
        const res = await post('/rpc', [['Content-Type', 'application/json']], body);
        const expected = expectFor(body);
        checkRpcAnswer(res, expected, body);
        const items = expected.kind === 'single' ? [expected.item] : expected.items;
        if (expected.kind === 'batch') seen.batch++;
        if (items.some((i) => i.kind === 'call')) seen.relayed++;
        if (items.some((i) => i.kind === 'call' && knownMethods.includes(i.method))) seen.routed++;
        if (items.some((i) => i.kind === 'error' && i.code === ErrorCode.ParseError)) seen.parseError++;
        if (items.some((i) => i.kind === 'error' && i.code === ErrorCode.InvalidRequest)) seen.invalid++;
        if (res.status === 204) seen.silent++;
      }),
      { numRuns: runs.bodies },
    );
    // The generator must keep reaching every branch: calls that reach a service over RabbitMQ, refusals of each kind,
    // batches. Thresholds sit 4+ standard deviations under the generator's measured rates (relayed 24 %, routed to a
    // known method 12 %, parse errors 27 %, invalid 53 %, batches 21 %, nothing to answer 5 %), so they never flake.
    expect(seen.relayed).toBeGreaterThan(runs.bodies * 0.12);
    expect(seen.routed).toBeGreaterThan(runs.bodies * 0.05);
    expect(seen.parseError).toBeGreaterThan(runs.bodies * 0.15);
    expect(seen.invalid).toBeGreaterThan(runs.bodies * 0.35);
    expect(seen.batch).toBeGreaterThan(runs.bodies * 0.1);
    expect(seen.silent).toBeGreaterThan(0);
  });
});

describe('POST /rpc headers', () => {
  const jsonTypes = ['application/json', 'application/json; charset=utf-8', 'application/json-rpc', 'application/jsonrequest', 'application/json;charset=UTF-8'];
  const notJson = ['text/plain', 'application/xml', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx', 'text/json', 'application/octet-stream'];
  // Mostly printable, so that most requests get past Node's header parser to the gateway's own checks.
  const anyText = fc.oneof(
    { weight: 4, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 60 }) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 60 }).map((s) => s.replace(/[\r\n]/g, '')) },
  );
  const contentType = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...jsonTypes).map((v) => ({ v, kind: 'json' as const })) },
    { weight: 2, arbitrary: fc.constantFrom(...notJson).map((v) => ({ v, kind: 'other' as const })) },
    { weight: 1, arbitrary: fc.constant({ v: undefined, kind: 'other' as const }) },
    { weight: 2, arbitrary: fc.oneof(anyText, fc.constantFrom('', ';', 'application/json;;', 'APPLICATION/JSON', 'application/json ;x=1', 'application/', '*/*', 'application/json, text/plain')).map((v) => ({ v, kind: 'unknown' as const })) },
  );
  const timeout = fc.oneof(
    { weight: 3, arbitrary: fc.constant(undefined) },
    { weight: 2, arbitrary: fc.integer({ min: 500, max: 10_000_000 }).map(String) },
    { weight: 2, arbitrary: fc.oneof(anyText, fc.constantFrom('0', '-1', '1e3', '1.5', ' 900 ', '\t900', '99999999999', '0x10', 'Infinity', 'NaN', '', '1,2')) },
  );
  const extra = fc.array(fc.tuple(fc.stringMatching(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,20}$/), anyText), { maxLength: 4 });
  const authorization = fc.option(anyText, { nil: undefined });
  const traceparent = fc.option(fc.oneof(anyText, fc.constantFrom('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', '00-00000000000000000000000000000000-0000000000000000-00', 'ff-x-y-z')), { nil: undefined });

  /** RFC 9110 field values: tab, visible ASCII, space, obs-text. Anything else (in the latin1 bytes sent) is a malformed request. */
  // eslint-disable-next-line no-control-regex
  const badValue = (v: string): boolean => /[\u0000-\u0008\u000a-\u001f\u007f]/.test(Buffer.from(v, 'latin1').toString('latin1'));

  it(`answers 200, 400 or 415 with the right body whatever the headers (${runs.headers} runs)`, async () => {
    const seen = { malformed: 0, answered: 0, unsupported: 0, badTimeout: 0, doubtful: 0 };
    await fc.assert(
      fc.asyncProperty(contentType, timeout, authorization, traceparent, extra, async (ct, t, auth, trace, more) => {
        const headers: [string, string][] = [];
        if (ct.v !== undefined) headers.push(['Content-Type', ct.v]);
        if (t !== undefined) headers.push(['X-Timeout-Ms', t]);
        if (auth !== undefined) headers.push(['Authorization', auth]);
        if (trace !== undefined) headers.push(['traceparent', trace]);
        // Names the gateway itself reads or the request framing depends on are left to the fields above.
        headers.push(...more.filter(([k]) => !/^(content-type|content-length|transfer-encoding|connection|host|x-timeout-ms|expect|upgrade)$/i.test(k)));
        const res = await post('/rpc', headers, '{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}');
        if (headers.some(([, v]) => badValue(v))) {
          seen.malformed++;
          expectRefusal(res, 400, ErrorCode.InvalidRequest, 'bad_http_request');
          return;
        }
        const trimmed = t?.replace(/^[ \t]+|[ \t]+$/g, '');
        const timeoutOk = trimmed === undefined || (/^\d{1,10}$/.test(trimmed) && Number(trimmed) > 0);
        if (ct.kind === 'other') {
          seen.unsupported++;
          expectRefusal(res, 415, ErrorCode.InvalidRequest, 'unsupported_media_type');
        } else if (ct.kind === 'json' && !timeoutOk) {
          seen.badTimeout++;
          expectRefusal(res, 400, ErrorCode.InvalidRequest, 'invalid_timeout_header');
        } else if (ct.kind === 'json') {
          seen.answered++;
          expect(res.status).toBe(200);
          expect(json(res)).toEqual({ jsonrpc: '2.0', result: 3, id: 1 });
        } else {
          // A content type of doubtful shape: accepted as JSON, or refused with a documented refusal.
          seen.doubtful++;
          expect([200, 400, 415]).toContain(res.status);
          const body = json(res);
          assertResponse(body);
          if (res.status === 200) expect(body).toEqual({ jsonrpc: '2.0', result: 3, id: 1 });
          else expect(body.error?.code).toBe(ErrorCode.InvalidRequest);
        }
      }),
      { numRuns: runs.headers },
    );
    // Every branch must keep being reached. Rates measured on 20,000 samples of these generators: malformed 39.5 %,
    // answered 20.5 %, unsupported 20.5 %, bad timeout 6.8 %, doubtful content type 12.7 %. Within 300 runs fast-check
    // favours small values (short strings, fewer bad bytes) more than over 20,000: a CI run saw malformed at exactly
    // 25 %, so that threshold sits at 10 %.
    expect(seen.malformed).toBeGreaterThan(runs.headers * 0.1);
    expect(seen.answered).toBeGreaterThan(runs.headers * 0.1);
    expect(seen.unsupported).toBeGreaterThan(runs.headers * 0.1);
    expect(seen.badTimeout).toBeGreaterThan(runs.headers * 0.01);
    expect(seen.doubtful).toBeGreaterThan(runs.headers * 0.04);
  });

  it(`lets in exactly the configured bearer token, whatever else is presented (${runs.auth} runs)`, async () => {
    const nearToken = fc.oneof(
      fc.constant(token),
      fc.tuple(fc.nat({ max: token.length - 1 }), fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 })).map(([i, c]) => `${token.slice(0, i)}${c}${token.slice(i + 1)}`),
      fc.string({ unit: 'grapheme-ascii', maxLength: 30 }).map((s) => `${token}${s}`),
      fc.string({ unit: 'grapheme-ascii', maxLength: 30 }).map((s) => `${s}${token}`),
      fc.constantFrom('', token.toUpperCase(), token.slice(1), `${token} ${token}`, `"${token}"`),
    );
    const scheme = fc.constantFrom('Bearer', 'bearer', 'BEARER', 'Basic', 'Token', '', 'Bearer:', 'Bearer\t');
    const gap = fc.constantFrom(' ', '  ', '\t', '', ' \t ');
    await fc.assert(
      fc.asyncProperty(scheme, gap, nearToken, gap, async (s, g1, t, g2) => {
        const value = `${s}${g1}${t}${g2}`;
        const res = await post('/rpc', [['Content-Type', 'application/json'], ['Authorization', value]], '{"jsonrpc":"2.0","method":"add","params":[2,2],"id":"a"}', authPort);
        // The parser drops leading and trailing whitespace of a field value; what is left must be exactly "Bearer <token>".
        const presented = value.replace(/^[ \t]+|[ \t]+$/g, '');
        const m = /^([^ \t]+)[ \t]+(.*)$/.exec(presented);
        const accepted = m !== null && m[1]?.toLowerCase() === 'bearer' && m[2] === token;
        if (accepted) {
          expect(res.status).toBe(200);
          expect(json(res)).toEqual({ jsonrpc: '2.0', result: 4, id: 'a' });
        } else {
          expectRefusal(res, 401, ErrorCode.Unauthorized, 'missing_or_invalid_token');
          expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
        }
      }),
      { numRuns: runs.auth },
    );
  });
});

describe('request targets', () => {
  const queryChar = fc.constantFrom(...'abcXYZ019_.-~+=&%[]!$\'()*,;:@/?'.split(''), '%00', '%zz', '%2F', '%26', '%3D', '__proto__', 'constructor', 'session_id', '=');
  const query = fc.array(queryChar, { maxLength: 30 }).map((a) => a.join(''));
  const pathVariant = fc.constantFrom('/rpc', '/rpc/', '//rpc', '/RPC', '/rpc/..', '/./rpc', '/x/../rpc', '/rpc%00', '/rpc%2F', '/%72pc', '/rpc;x', '/rpc#x', '*', '/', '/nope', '/healthz/../rpc');

  it(`answers /rpc with any query string, and unknown paths with 404 (${runs.paths} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(pathVariant, fc.option(query, { nil: undefined }), async (path, q) => {
        const target = q === undefined ? path : `${path}?${q}`;
        const res = await post(target, [['Content-Type', 'application/json']], '{"jsonrpc":"2.0","method":"add","params":[1,1],"id":2}');
        if (path === '/rpc' || path === '/rpc#x') {
          expect({ target, status: res.status }).toEqual({ target, status: 200 });
          expect(json(res)).toEqual({ jsonrpc: '2.0', result: 2, id: 2 });
        } else {
          // Other spellings are another route: 404 (fastify's own JSON body), or 400 for a target it cannot read.
          expect({ target, ok: [200, 400, 404].includes(res.status) }).toEqual({ target, ok: true });
          const body = json(res) as Record<string, unknown>;
          if (res.status === 200) expect(body).toEqual({ jsonrpc: '2.0', result: 2, id: 2 });
          if (res.status === 400) assertResponse(body);
        }
      }),
      { numRuns: runs.paths },
    );
  });

  it(`answers MCP posts to unknown or malformed SSE session ids with 404 or 400, never 500 (${runs.sseSessions} runs)`, async () => {
    const sessionValue = fc.oneof(
      fc.uuid(), fc.stringMatching(/^[0-9a-f]{32}$/), fc.string({ unit: 'grapheme-ascii', maxLength: 40 }).map(encodeURIComponent),
      fc.constantFrom('', '%', '%00', '00000000-0000-0000-0000-000000000000', '..%2F..%2F', '__proto__', 'constructor', '*', 'x'.repeat(2000)),
    );
    const part = fc.oneof(
      sessionValue.map((v) => `session_id=${v}`), sessionValue.map((v) => `sessionId=${v}`),
      fc.constantFrom('session_id', 'session_id[]=a', '__proto__=1', 'constructor=1', 'a=b', '&', ''),
    );
    const body = fc.constantFrom('{"jsonrpc":"2.0","id":1,"method":"ping"}', '{"jsonrpc":"2.0","method":"notifications/initialized"}', 'nope', '[]');
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('/messages', '/messages/'), fc.array(part, { maxLength: 4 }), body, async (path, parts, b) => {
        const q = parts.join('&');
        const res = await post(`${path}?${q}`, [['Content-Type', 'application/json']], b);
        const params = new URLSearchParams(q);
        const given = [...params.getAll('session_id'), ...(params.has('session_id') ? [] : params.getAll('sessionId'))];
        const named = params.getAll('session_id').length > 1 || (params.getAll('session_id').length === 0 && params.getAll('sessionId').length > 1) || given.some((v) => v.length > 0);
        if (!named) expectRefusal(res, 400, ErrorCode.InvalidRequest, 'session_id_required');
        else expectRefusal(res, 404, ErrorCode.InvalidRequest, 'session_not_found');
      }),
      { numRuns: runs.sseSessions },
    );
  });

  it(`answers /mcp with a random or missing Mcp-Session-Id and any body with 400 or 404 (${runs.mcpSessions} runs)`, async () => {
    const sessionHeader = fc.option(fc.oneof(fc.uuid(), fc.string({ unit: 'grapheme-ascii', maxLength: 60 }).map((s) => s.replace(/[\r\n]/g, ''))), { nil: undefined });
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('POST', 'GET', 'DELETE'), sessionHeader, bodies, async (method, session, body) => {
        const headers: [string, string][] = [['Accept', 'application/json, text/event-stream']];
        if (session !== undefined) headers.push(['Mcp-Session-Id', session]);
        if (method === 'POST') headers.push(['Content-Type', 'application/json']);
        const res = await rawHttp(port, httpRequest(method, '/mcp', headers, method === 'POST' ? body : ''));
        if (method === 'POST') {
          const e = expectFor(body);
          const items = e.kind === 'single' ? [e.item] : e.items;
          const refused = items.find((i): i is Extract<ItemExpectation, { kind: 'error' }> => i.kind === 'error');
          if (refused) {
            expect(res.status).toBe(400);
            const answer = json(res);
            assertResponse(answer);
            expect(answer.error?.code).toBe(refused.code);
            return;
          }
          // initialize is never generated, so no session is ever created here.
          expect(items.some((i) => i.kind === 'call' && i.method === 'initialize')).toBe(false);
        }
        if (session !== undefined) expectRefusal(res, 404, ErrorCode.InvalidRequest, 'session_not_found');
        else expectRefusal(res, 400, ErrorCode.InvalidRequest, 'session_id_required');
      }),
      { numRuns: runs.mcpSessions },
    );
    expect(f.broker.gateway.sessions.counts()).toEqual({ sse: 0, streamable: 0 });
  });
});

describe('broken HTTP', () => {
  const line = fc.string({ unit: 'binary-ascii', maxLength: 60 });
  // Host: 127.0.0.1, a name the loopback gateway serves, so the framing is what is judged (a foreign Host answers 403 first).
  const garbage = fc.oneof(
    fc.uint8Array({ maxLength: 400 }).map((b) => Buffer.from(b)),
    fc.array(line, { maxLength: 6 }).map((ls) => Buffer.from(`POST /rpc HTTP/1.1\r\n${ls.join('\r\n')}\r\n\r\n{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`, 'latin1')),
    fc.tuple(fc.constantFrom('abc', '-1', '99999999999999999999', '1, 2', '0x10', ''), fc.constantFrom('', 'chunked')).map(([len, te]) =>
      Buffer.from(`POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${len}\r\n${te ? `Transfer-Encoding: ${te}\r\n` : ''}Connection: close\r\n\r\n{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1}`)),
    fc.constantFrom(
      'GET / HTTP/9.9\r\n\r\n', 'POST /rpc HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\nzz\r\n', '\r\n\r\n',
      `POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\n${'X-A: b\r\n'.repeat(3000)}\r\n`, `GET /${'a'.repeat(20_000)} HTTP/1.1\r\n\r\n`,
    ).map((s) => Buffer.from(s)),
  );

  it(`answers malformed requests with a documented status, or closes the connection (${runs.framing} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(garbage, async (bytes) => {
        const res = await rawHttp(port, bytes, { halfClose: true });
        // 0: closed without an answer (the request never became complete).
        expect({ status: res.status, ok: [0, 200, 400, 404, 413, 415, 431].includes(res.status), sent: bytes.toString('latin1').slice(0, 200) })
          .toMatchObject({ ok: true });
        // Node itself answers an HTTP/1.1 request without Host with a bare 400 before any handler runs (RFC 9112 §3.2).
        const bareHostRefusal = res.status === 400 && res.body.length === 0 && !/\r\nhost:/i.test(bytes.toString('latin1'));
        if ([400, 413, 415, 431].includes(res.status) && !bareHostRefusal) {
          const body = json(res);
          assertResponse(body);
          expect(body.id).toBeNull();
        }
      }),
      { numRuns: runs.framing },
    );
  });
});

it('never answered a malformed payload with anything but -32700/-32600 (sanity of the oracle itself)', () => {
  const probe = (s: string): PayloadExpectation => expectFor(Buffer.from(s));
  expect(probe('{')).toEqual({ kind: 'single', item: { kind: 'error', code: -32700, id: null } });
  expect(probe('[]')).toEqual({ kind: 'single', item: { kind: 'error', code: -32600, id: null } });
  expect(probe('{"jsonrpc":"2.0","method":"x","id":1}')).toEqual({ kind: 'single', item: { kind: 'call', method: 'x', params: undefined, id: 1 } });
  expect(probe('{"jsonrpc":"2.0","method":"x"}')).toEqual({ kind: 'single', item: { kind: 'nothing' } });
  expect(probe(`${'['.repeat(65)}${']'.repeat(65)}`)).toEqual({ kind: 'single', item: { kind: 'error', code: -32700, id: null } });
  const id: Id = 'x';
  expect(probe('{"jsonrpc":"1.0","method":"x","id":"x"}')).toEqual({ kind: 'single', item: { kind: 'error', code: -32600, id } });
});
