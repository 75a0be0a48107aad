// `warren repl` through the gateway against the embedded system (what `npm start` runs without
// RabbitMQ): driven key by key as at a terminal, through runRepl's streams. Completion lists
// methods and param names from rpc.discover, a call prints its answer, an error its code, message
// and data, and the history file brings the last line back in the next session.
import { readFileSync, statSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import path from 'node:path';
import { silentLogger } from '@warren/logger';
import { Teardown } from '@warren/testkit';
import { resolveSettings, runRepl, type Io } from '../../libs/cli/src';
import { driveRepl, tempDir, type ReplDriver } from '../../libs/cli/test/support/repl-driver';
import { startEmbedded, type EmbeddedSystem } from '../../scripts/embedded';

const td = new Teardown();
let system: EmbeddedSystem;
let historyFile: string;

beforeAll(async () => {
  system = await startEmbedded({ GATEWAY_AUTH: 'none', GATEWAY_PORT: '0', JOBS_STEP_MS: '200' }, () => silentLogger(), { broker: { defaultMetrics: false } });
  td.add(() => system.close());
  const temp = tempDir();
  td.add(() => temp.remove());
  historyFile = path.join(temp.dir, 'state', 'warren', 'repl_history');
}, 30_000);
afterAll(() => td.run());

const open = (): ReplDriver => {
  const repl = driveRepl({ via: 'gateway', gateway: system.url }, {}, historyFile);
  // A failed step leaves the REPL running: end its input so its session closes.
  td.add(() => repl.end().then(() => undefined));
  return repl;
};

it('completes methods and param names from rpc.discover, calls, and prints answers and errors', async () => {
  const repl = open();
  await repl.type('', /\d+ methods, \d+ notifications \(from rpc\.discover\)/);
  // Tab on a unique prefix completes it; Tab twice on many lists them all.
  repl.mark();
  await repl.type('call sub\t', 'call subtract');
  await repl.type(' min\t', 'call subtract minuend=');
  await repl.type('42 \t', 'subtrahend=');
  await repl.type('23\r', '\n19\n');
  repl.mark();
  const listed = await repl.type('call \t\t', 'report.render');
  for (const m of ['add', 'calculate', 'get_data', 'subtract', 'sum', 'audit.recent', 'report.render', 'dlq.list']) expect(listed.split('\n')).toContain(m);
  repl.mark();
  await repl.type('\u0015report.render \t\t', 'size=');
  expect(repl.since()).toContain('title=');
  // A method's name alone calls it; positional words and inline JSON are params too.
  repl.mark();
  await repl.type('\u0015add 4 5\r', '\n9\n');
  repl.mark();
  await repl.type('call calculate {"expression": "1+3+6"}\r', '"10"');
  // An error answer: its code and message, and its data (schema failures) below.
  repl.mark();
  const invalid = await repl.type('call subtract 1\r', 'params: must NOT have fewer than 2 items (minItems)');
  expect(invalid).toContain('error -32602: Invalid params');
  repl.mark();
  await repl.type('call no_such_method\r', 'error -32601');
  repl.mark();
  await repl.type('frobnicate\r', 'error CLI_USAGE');
  // Still running after errors: notify, batch, methods, inflight.
  repl.mark();
  await repl.type('notify notify_hello 7\r', 'sent notify_hello');
  repl.mark();
  const batch = await repl.type('batch [{"method":"sum","params":[1,2,4],"id":1},{"method":"add","params":[1],"id":2}]\r', 'error -32602');
  expect(batch).toMatch(/1\s+1\s+sum\s+7/);
  repl.mark();
  await repl.type('methods\r', /subtract\s+minuend subtrahend\s+calculator/);
  repl.mark();
  await repl.type('inflight\r', 'no calls in flight');
  repl.mark();
  await repl.type('dlq ls\r', 'no dead letters');
  await expect(repl.end()).resolves.toBe(0);
  // The history file holds the lines, oldest first, private to the user.
  const saved = readFileSync(historyFile, 'utf8').split('\n');
  expect(saved).toContain('call subtract minuend=42 subtrahend=23');
  expect(saved[saved.length - 2]).toBe('dlq ls');
  expect(statSync(historyFile).mode & 0o777).toBe(0o600);
});

it('brings the last session back with the up arrow (history file)', async () => {
  const repl = open();
  await repl.type('', 'from rpc.discover');
  repl.mark();
  // Newest first: dlq ls, inflight, then back to the first line of the last session (eleven lines up).
  await repl.type('\u001b[A\u001b[A', 'inflight');
  repl.mark();
  await repl.type('\u001b[A'.repeat(9), 'call subtract minuend=42 subtrahend=23');
  repl.mark();
  await repl.type('\r', '\n19\n');
  await expect(repl.end()).resolves.toBe(0);
  expect(readFileSync(historyFile, 'utf8').trimEnd().split('\n').pop()).toBe('call subtract minuend=42 subtrahend=23');
});

it('runs lines piped in without a terminal: no prompt, no history, the exit code of the last line', async () => {
  const stdin = new PassThrough();
  let out = '';
  const stdout = new PassThrough().on('data', (c: Buffer) => (out += c.toString()));
  const io: Io = { stdin, stdout, stderr: stdout, env: { WARREN_REPL_HISTORY: 'off' } };
  stdin.end('add 4 5\nsum [1, 2, 4]\ncall subtract 1\n');
  await expect(runRepl(io, resolveSettings(io, { via: 'gateway', gateway: system.url }))).resolves.toBe(1);
  expect(out).toMatch(/^9\n7\nerror -32602: Invalid params\n/);
  expect(out).not.toContain('warren>');
});
