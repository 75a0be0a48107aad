// `warren gen`: the committed example clients match the committed OpenRPC document (the CI check
// that needs nothing running; test/integration/gen.int.test.ts checks that document against the
// live system), --check fails on a stale file, output does not depend on the document's order,
// bad documents are usage errors, and a live embedded system is read through its gateway.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { silentLogger } from '@warren/logger';
import { startEmbedded, type EmbeddedSystem } from '../../../scripts/embedded';
import { ExitCode, run, type Io } from '../src/index';

const examples = path.resolve(__dirname, '..', '..', '..', 'examples', 'generated');
const committed = { doc: path.join(examples, 'example-system.openrpc.json'), ts: path.join(examples, 'warren-api.ts'), python: path.join(examples, 'warren_api.py') };

function fakeIo(stdin = ''): Io & { output: () => string; errors: () => string } {
  let out = '';
  let err = '';
  const input = new PassThrough();
  input.end(stdin);
  return { stdout: { write: (t: string) => (out += t) }, stderr: { write: (t: string) => (err += t) }, stdin: input, env: {}, output: () => out, errors: () => err };
}

let dir: string;
beforeEach(() => (dir = mkdtempSync(path.join(tmpdir(), 'warren-gen-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const doc = (): Record<string, unknown> & { methods: Record<string, unknown>[] } => JSON.parse(readFileSync(committed.doc, 'utf8')) as Record<string, unknown> & { methods: Record<string, unknown>[] };
const file = (name: string): string => path.join(dir, name);

describe('warren gen from a saved document', () => {
  it('finds the committed clients up to date with the committed document (--check)', async () => {
    const io = fakeIo();
    expect(await run(['gen', '--from', committed.doc, '--ts', committed.ts, '--python', committed.python, '--openrpc', committed.doc, '--check'], io)).toBe(ExitCode.ok);
    expect(io.errors()).toBe('');
    const operator = doc().methods.filter((m) => m['x-warren-service'] === 'warren-broker').length;
    const methods = doc().methods.length - operator;
    const notifications = new Set((doc()['x-warren-notifications'] as { name: string }[]).map((n) => n.name)).size;
    expect(operator).toBe(22);
    expect(io.output()).toContain(`warren-api.ts (${methods} methods, ${notifications} notifications; ${operator} operator methods left out (--operator-methods))\n`);
  });

  it("--service keeps those services' methods and notifications; the broker's methods only with --operator-methods or --service naming it", async () => {
    const names = (): string[] => [...readFileSync(file('api.py'), 'utf8').matchAll(/^ {4}def ([a-z_]+)\(self/gm)].map((m) => m[1] ?? '');
    const gen = async (...flags: string[]): Promise<number> => run(['gen', '--from', committed.doc, '--python', file('api.py'), ...flags], fakeIo());
    expect(await gen('--service', 'calculator', '--service', 'jobs')).toBe(ExitCode.ok);
    const calcAndJobs = names();
    expect(calcAndJobs).toEqual(expect.arrayContaining(['add', 'subtract', 'report_render']));
    expect(calcAndJobs.some((n) => n.startsWith('audit') || n.startsWith('dlq') || n.startsWith('workers'))).toBe(false);
    expect(await gen()).toBe(ExitCode.ok);
    expect(names().some((n) => n.startsWith('dlq') || n.startsWith('workers') || n.startsWith('schedule'))).toBe(false);
    expect(await gen('--operator-methods')).toBe(ExitCode.ok);
    expect(names()).toEqual(expect.arrayContaining(['dlq_list', 'workers_pause', 'schedule_add', 'add']));
    expect(await gen('--service', 'warren-broker')).toBe(ExitCode.ok);
    expect(names()).toEqual(expect.arrayContaining(['dlq_list', 'workers_pause']));
    expect(names()).not.toContain('add');
    const io = fakeIo();
    expect(await run(['gen', '--from', committed.doc, '--python', file('api.py'), '--service', 'calculater'], io)).toBe(ExitCode.usage);
    expect(io.errors()).toMatch(/--service "calculater": no such service in the document \(it has audit, calculator, jobs, warren-broker\)/);
  });

  it('writes, then --check passes; a changed document makes --check fail naming the stale file', async () => {
    writeFileSync(file('doc.json'), JSON.stringify(doc()));
    const outputs = ['--ts', file('out/api.ts'), '--python', file('out/api.py')];
    expect(await run(['gen', '--from', file('doc.json'), ...outputs], fakeIo())).toBe(ExitCode.ok);
    expect(readFileSync(file('out/api.ts'), 'utf8')).toBe(readFileSync(committed.ts, 'utf8'));
    expect(await run(['gen', '--from', file('doc.json'), ...outputs, '--check'], fakeIo())).toBe(ExitCode.ok);

    const changed = doc();
    changed.methods = changed.methods.filter((m) => m['name'] !== 'sum');
    writeFileSync(file('doc.json'), JSON.stringify(changed));
    const io = fakeIo();
    expect(await run(['--json', 'gen', '--from', file('doc.json'), ...outputs, '--check'], io)).toBe(ExitCode.error);
    expect(JSON.parse(io.output())).toEqual({ upToDate: false, stale: [file('out/api.ts'), file('out/api.py')], checked: [file('out/api.ts'), file('out/api.py')] });
    // A missing file is stale too.
    expect(await run(['gen', '--from', file('doc.json'), '--ts', file('nowhere.ts'), '--check'], fakeIo())).toBe(ExitCode.error);
  });

  it('gives the same bytes whatever the order of the document (methods, notifications, keys)', async () => {
    const reversed = (value: unknown): unknown =>
      Array.isArray(value) ? value.map(reversed) : value !== null && typeof value === 'object' ? Object.fromEntries(Object.entries(value).reverse().map(([k, v]) => [k, reversed(v)])) : value;
    const shuffled = reversed(doc()) as Record<string, unknown[]>;
    // Reverse the lists whose order is not part of the meaning (schemas' lists, like enum and required, keep theirs).
    shuffled['methods']?.reverse();
    shuffled['x-warren-notifications']?.reverse();
    writeFileSync(file('doc.json'), JSON.stringify(shuffled));
    expect(await run(['gen', '--from', file('doc.json'), '--ts', committed.ts, '--python', committed.python, '--check'], fakeIo())).toBe(ExitCode.ok);
  });

  it('reads the document from stdin with --from -', async () => {
    expect(await run(['gen', '--from', '-', '--ts', committed.ts, '--check'], fakeIo(readFileSync(committed.doc, 'utf8')))).toBe(ExitCode.ok);
  });

  it.each<[string, string, RegExp]>([
    ['not JSON', '{', /is not JSON/],
    ['not OpenRPC', '{"methods": []}', /not an OpenRPC document/],
    ['a method without a name', '{"openrpc": "1.3.2", "methods": [{}]}', /methods\[0\] has no name/],
    ['a method twice', '{"openrpc": "1.3.2", "methods": [{"name": "a"}, {"name": "a"}]}', /lists method "a" twice/],
    ['a params schema that is not one', '{"openrpc": "1.3.2", "methods": [{"name": "a", "x-warren-params-schema": 7}]}', /method a: x-warren-params-schema is not a JSON Schema/],
    ['a params schema that does not compile', '{"openrpc": "1.3.2", "methods": [{"name": "a", "x-warren-params-schema": {"type": 42}}]}', /method a: its params schema does not compile/],
  ])('answers %s with a usage error (exit 2)', async (_what, text, message) => {
    writeFileSync(file('doc.json'), text);
    const io = fakeIo();
    expect(await run(['gen', '--from', file('doc.json'), '--ts', file('api.ts')], io)).toBe(ExitCode.usage);
    expect(io.errors()).toMatch(message);
  });

  it('needs an output', async () => {
    const io = fakeIo();
    expect(await run(['gen', '--from', committed.doc], io)).toBe(ExitCode.usage);
    expect(io.errors()).toMatch(/--ts FILE, --python FILE or --openrpc FILE/);
  });
});

describe('warren gen from a live system through its gateway', () => {
  let system: EmbeddedSystem;
  beforeAll(async () => {
    system = await startEmbedded({ GATEWAY_AUTH: 'none', GATEWAY_PORT: '0' }, () => silentLogger(), { broker: { defaultMetrics: false } });
  });
  afterAll(() => system.close());

  it("writes the clients of the embedded system from its rpc.discover (--via gateway)", async () => {
    const io = fakeIo();
    expect(await run(['--via', 'gateway', '--gateway', system.url, 'gen', '--ts', file('api.ts'), '--openrpc', file('doc.json')], io)).toBe(ExitCode.ok);
    const text = readFileSync(file('api.ts'), 'utf8');
    for (const name of ['add', 'subtract', 'sum', 'getData', 'calculate', 'reportRender', 'reportProgress', 'auditRecent', 'notifySum']) expect(text).toContain(`export function ${name}(`);
    // Embedded, the jobs queue is not durable: report.render is not sent persistent there.
    expect(text).toContain('caller.call<ReportRenderResult>("report.render", params, options)');
    expect(readFileSync(file('doc.json'), 'utf8')).not.toContain('"servers"');
  });

  it('exits 3 when the live system cannot be reached', async () => {
    const io = fakeIo();
    const code = await run(['--via', 'amqp', '--amqp-url', 'amqp://guest:guest@127.0.0.1:1', '--connect-timeout', '300', 'gen', '--ts', file('api.ts')], io);
    expect(code).toBe(ExitCode.unreachable);
    expect(io.errors()).toMatch(/cannot reach RabbitMQ/);
  });
});
