// The console's routes on a real broker: the page and its bundle are public
// (a browser cannot send a token when it navigates) with a strict CSP; the
// live feed sits behind the token, is bounded, and carries what the gateway
// relays.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { Teardown } from '@warren/testkit';
import { TestNamespace } from '../../test/support/amqp';
import { startFixture, type Fixture } from './support';

const td = new Teardown();
const ns = new TestNamespace();
const token = 'routes-token';
/** A client token: it sees only its own calls in /inflight, and no cluster-wide feed. */
const clientToken = 'console-client-token';
let f: Fixture;

/** Reads a feed until `until` holds for the events so far; then hangs up. */
async function readFeed(headers: Record<string, string>, until: (events: { event: string; data: unknown }[]) => boolean): Promise<{ event: string; data: unknown }[]> {
  const stop = new AbortController();
  const response = await fetch(`${f.url}/console/events`, { headers, signal: stop.signal });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const events: { event: string; data: unknown }[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  while (!until(events)) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const name = /^event: (.*)$/m.exec(frame)?.[1];
      const data = /^data: (.*)$/m.exec(frame)?.[1];
      if (name && data) events.push({ event: name, data: JSON.parse(data) as unknown });
    }
  }
  stop.abort();
  return events;
}

beforeAll(async () => {
  execFileSync(process.execPath, [path.resolve(__dirname, '..', 'console', 'build.mjs')], { stdio: 'pipe' });
  td.add(() => ns.destroy());
  f = await startFixture(ns, td, { tokens: [{ token, operator: true }, { token: clientToken }], console: { pollMs: 100, maxClients: 2 } });
});
afterAll(() => td.run());

test('GET / serves the page without a token, with a CSP that allows no inline script', async () => {
  const response = await fetch(`${f.url}/`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/html/);
  const csp = response.headers.get('content-security-policy') ?? '';
  expect(csp).toContain("script-src 'self'");
  expect(csp).not.toContain('unsafe-inline');
  const html = await response.text();
  expect(html).toMatch(/<script src="\/console\/assets\/app\.js\?v=[0-9a-f]{12}" defer><\/script>/);
  expect(html).not.toMatch(/<script>/);
});

test('the bundle is served without a token; nothing else under /console/assets is', async () => {
  const js = await fetch(`${f.url}/console/assets/app.js`);
  expect(js.status).toBe(200);
  expect(js.headers.get('content-type')).toMatch(/javascript/);
  expect((await js.text()).length).toBeGreaterThan(1000);
  expect((await fetch(`${f.url}/console/assets/app.css`)).headers.get('content-type')).toMatch(/^text\/css/);
  expect((await fetch(`${f.url}/console/assets/..%2f..%2fpackage.json`)).status).toBe(404);
  expect((await fetch(`${f.url}/console/assets/nope.js`)).status).toBe(404);
});

test('the feed needs an operator token: it shows every call, which a client token may not see', async () => {
  expect((await fetch(`${f.url}/console/events`)).status).toBe(401);
  expect((await fetch(`${f.url}/console/events`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
  // A valid client token is told so (403, operator_token_required), apart from a wrong one (401): the page's prompt says which.
  const client = await fetch(`${f.url}/console/events`, { headers: { authorization: `Bearer ${clientToken}` } });
  expect(client.status).toBe(403);
  expect(await client.json()).toMatchObject({ error: { data: { reason: 'operator_token_required' } } });
});

test('the feed sends a snapshot at once, then the outcome of a call relayed through POST /rpc', async () => {
  const auth = { authorization: `Bearer ${token}` };
  const events = await readFeed(auth, (e) => {
    if (e.some((x) => x.event === 'inflight') && !e.some((x) => x.event === 'sent')) {
      e.push({ event: 'sent', data: null });
      void fetch(`${f.url}/rpc`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","method":"add","params":[2,3],"id":1}' });
    }
    return e.some((x) => x.event === 'outcomes' && (x.data as { items: { method: string }[] }).items.some((o) => o.method === 'add'));
  });
  const names = events.map((e) => e.event);
  expect(names.slice(0, 3)).toEqual(['hello', 'outcomes', 'catalogue']);
  const outcome = events.flatMap((e) => (e.event === 'outcomes' ? (e.data as { items: Record<string, unknown>[] }).items : [])).find((o) => o['method'] === 'add');
  expect(outcome).toMatchObject({ state: 'done', seenBy: 'gateway' });
  expect(typeof outcome?.['durationMs']).toBe('number');
});

test('one browser more than maxClients is refused with 503', async () => {
  const auth = { authorization: `Bearer ${token}` };
  const open = await Promise.all([0, 1].map(() => fetch(`${f.url}/console/events`, { headers: auth })));
  try {
    expect(open.map((r) => r.status)).toEqual([200, 200]);
    const third = await fetch(`${f.url}/console/events`, { headers: auth });
    expect(third.status).toBe(503);
    expect(await third.json()).toMatchObject({ error: { code: -32004 } });
  } finally {
    for (const r of open) await r.body?.cancel();
  }
});
