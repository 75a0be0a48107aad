// Installable by others, exactly as docs/running.md "Using the packages from another project" says:
// the page's sh block (test/pack/doc-block.ts reads it) runs as written in a fresh directory outside
// the repository: `npm run pack` builds and packs every publishable package, the tarballs are
// installed with the public registry blocked for the @warren scope, `warren new service` scaffolds
// a service, Warren's `npm start` runs beside it (RabbitMQ mode, a unique WARREN_NAMESPACE shared by
// both, a free GATEWAY_PORT the project's WARREN_GATEWAY names), the service starts with `warren
// start`, answers `warren call` over RabbitMQ and through the stack's gateway, and `warren services`
// lists it; the stack is stopped with its whole process tree on every path. Then, from the same installed packages: a plain CommonJS service and client, the
// broker's bin and the CLI's bin; the tarballs hold what they must (dist, src, LICENSE) and
// nothing of the tests; every source map of an installed file resolves to a shipped source; the
// declarations resolve through the `exports` maps.
// `npm run test:pack` (jest.late.config.js): it writes dist/, so .ci/run runs it after `npm test`,
// never beside tests that start the `warren` bin (which prefers a built dist/).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Teardown, amqpUrl, freePort, waitFor } from '@warren/testkit';
import { deleteRedisKeys } from '../integration/helpers';
import { groupsOf, processTree, survivors } from '../integration/stack';
import { TestNamespace } from '../support/amqp';
import { callCjs, consumerTs, serveCjs, tsconfigJson } from './app-files';
import { docSteps } from './doc-block';
import { publishablePackages } from '../../scripts/packages';

const root = path.resolve(__dirname, '../..');
const td = new Teardown();
const ns = new TestNamespace();
ns.service('calc');
ns.service('warren-broker');
// The page's flow runs in a namespace of its own: the stack's calculator also serves `add`, and its
// queue, bound for `add`, would take the calls the later tests make to their own service.
const docNs = new TestNamespace();
for (const s of ['billing', 'calculator', 'audit', 'jobs', 'warren-broker']) docNs.service(s);
/** The stack's gateway port, picked free in beforeAll (the project's WARREN_GATEWAY names it). */
let gatewayPort = 0;
let work: string;
let app: string;
let packed: { name: string; files: { path: string }[] }[];
/** What each shell step of the page's block printed, in order. */
const outputs: string[] = [];

/** Runs a command to its end; rejects with its output when it fails. */
function run(cmd: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { cwd, env, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${cmd} ${args.join(' ')} failed: ${err.message}\n${stdout}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

/** Sends `signal` to each pid, some of which may be gone already. */
function signal(pids: readonly number[], sig: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, sig);
    } catch {
      // gone already
    }
  }
}

/**
 * Starts a long-running command and resolves once a stdout line passes `ready`, with `stop` (also run by
 * the teardown, once): SIGTERM to its process group. With `tree` (npm start: its children run in process
 * groups of their own), `stop` reads the whole process tree first, waits up to 30 s for it to drain
 * after the SIGTERM (npm start's own bound is 20 s), and SIGKILLs whatever is left.
 */
async function startUntil(cmd: string, args: readonly string[], env: NodeJS.ProcessEnv, ready: (line: string) => boolean, cwd = app, tree = false): Promise<{ child: ChildProcess; line: string; stop: () => Promise<void> }> {
  const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const stderr: string[] = [];
  child.stderr.on('data', (b: Buffer) => stderr.push(b.toString()));
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => (stopped ??= stopChild(child, tree));
  td.add(stop);
  const lines = createInterface({ input: child.stdout });
  const exited = once(child, 'exit').then(([code]) => {
    throw new Error(`${[cmd, ...args].join(' ')} exited (${String(code)}) before it was ready: ${stderr.join('')}`);
  });
  const found = new Promise<string>((resolve) => lines.on('line', (l) => ready(l) && resolve(l)));
  return { child, line: await Promise.race([found, exited]), stop };
}

/** SIGTERM to the child's process group; with `tree`, then whatever of its process tree outlives 30 s is SIGKILLed. */
async function stopChild(child: ChildProcess, tree: boolean): Promise<void> {
  const seen = tree ? processTree(child.pid as number) : [];
  const groups = groupsOf(seen);
  if (child.exitCode === null && child.signalCode === null) {
    const exited = once(child, 'exit');
    // The whole group: `npx tsx main.ts` is npm, tsx and the service's node.
    signal([-(child.pid as number)], 'SIGTERM');
    await exited;
  }
  if (!tree) return;
  await waitFor(() => survivors(seen, groups).length === 0, { timeoutMs: 30_000, intervalMs: 200, message: 'npm start gone' }).catch(() => undefined);
  signal(survivors(seen, groups), 'SIGKILL');
}

/** The environment of a user's shell: none of the npm run variables jest was started under (INIT_CWD would move --out). */
function userEnv(namespace = ns.namespace): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k) && k !== 'INIT_CWD'));
  return { ...env, AMQP_URL: amqpUrl(), WARREN_NAMESPACE: namespace, REDIS_URL: '', NODE_PATH: '', LOG_FORMAT: 'json' };
}
const appEnv = (): NodeJS.ProcessEnv => userEnv();

/** The page's shells: both the project and the stack in `docNs`, the stack's gateway on a free port the project's CLI is pointed at. */
const docEnv = (): NodeJS.ProcessEnv => ({ ...userEnv(docNs.namespace), GATEWAY_PORT: String(gatewayPort), WARREN_GATEWAY: `http://127.0.0.1:${gatewayPort}` });

/** Runs docs/running.md's block in `work` (beside a `warren` that is this checkout), carrying the directory from step to step. */
async function followTheDocs(): Promise<string> {
  let cwd = work;
  const cwdFile = path.join(work, '.cwd');
  const running: (() => Promise<void>)[] = [];
  for (const step of docSteps(root)) {
    if (step.kind === 'background') {
      // Warren's `npm start` is ready once its broker is (its gateway listens, its first discovery round
      // is over); a service once it says so.
      const stack = /^npm .*\bstart$/.test(step.line);
      running.push((await startUntil('bash', ['-c', step.line], docEnv(), (l) => l.includes(stack ? '"msg":"broker ready"' : 'service ready'), cwd, stack)).stop);
      continue;
    }
    outputs.push(await run('bash', ['-c', ['set -e', ...step.lines, `pwd > ${JSON.stringify(cwdFile)}`].join('\n')], cwd, docEnv()));
    cwd = readFileSync(cwdFile, 'utf8').trim();
  }
  // Stopped now, not at the end (the teardown would otherwise): the tests below need no stack.
  await Promise.all(running.reverse().map((stop) => stop()));
  return cwd;
}

/** Each tarball's package name and files, read from the tarball. */
async function readTarballs(dir: string): Promise<typeof packed> {
  const tarballs = readdirSync(dir).filter((f) => f.endsWith('.tgz'));
  return Promise.all(
    tarballs.map(async (f) => {
      const file = path.join(dir, f);
      const manifest = JSON.parse(await run('tar', ['-xzOf', file, 'package/package.json'], dir)) as { name: string };
      const files = (await run('tar', ['-tzf', file], dir)).split('\n').filter((l) => l !== '' && !l.endsWith('/')).map((l) => ({ path: l.replace(/^package\//, '') }));
      return { name: manifest.name, files };
    }),
  );
}

beforeAll(async () => {
  td.add(() => ns.destroy());
  td.add(() => docNs.destroy());
  // npm start's audit and jobs keep their records in the local Redis, under the namespace.
  td.add(() => deleteRedisKeys(docNs.namespace));
  gatewayPort = await freePort();
  // `npm run pack` builds as `npm run build` does (tsc -b tsconfig.build.json, then the console bundle); a
  // checkout that had no dist/ gets none back (the `warren` bin would prefer a stale one later).
  if (!existsSync(path.join(root, 'libs/jsonrpc/dist/index.js'))) td.add(() => run(process.execPath, [require.resolve('typescript/bin/tsc'), '-b', '--clean', 'tsconfig.build.json'], root).then(() => undefined));
  work = mkdtempSync(path.join(os.tmpdir(), 'warren-pack-'));
  td.add(() => rmSync(work, { recursive: true, force: true }));
  // The page's "your checkout of Warren, beside the project".
  symlinkSync(root, path.join(work, 'warren'));
  app = await followTheDocs();
  packed = await readTarballs(path.join(work, 'warren-packages'));
  writeFileSync(path.join(app, 'serve.cjs'), serveCjs);
  writeFileSync(path.join(app, 'call.cjs'), callCjs);
  writeFileSync(path.join(app, 'consumer.ts'), consumerTs);
  writeFileSync(path.join(app, 'tsconfig.json'), tsconfigJson);
}, 900_000);

afterAll(() => td.run(), 60_000);

describe('docs/running.md, followed word for word', () => {
  it('packs, installs with the registry blocked for @warren, scaffolds a service, starts it beside npm start and calls it', () => {
    expect(app).toBe(path.join(work, 'my-app'));
    expect(readFileSync(path.join(app, '.npmrc'), 'utf8')).toContain('@warren:registry=http://127.0.0.1:9/');
    expect(JSON.parse(readFileSync(path.join(app, 'warren.config.json'), 'utf8'))).toEqual({ services: [{ name: 'billing', main: 'services/billing/src/main.ts' }] });
    // The block's last lines: a call over RabbitMQ, one through the stack's gateway, and `warren services`.
    const last = outputs.at(-1) ?? '';
    expect(last).toContain('Hello, Ada!');
    expect(last).toContain('Hello, Bob!');
    // `warren services` (through the gateway): the project's service beside the stack's own.
    expect(last).toMatch(/\bbilling\b/);
    expect(last).toMatch(/\bcalculator\b/);
  });
});

describe('npm pack of the publishable packages', () => {
  it('packs each with dist (js, declarations, maps), src, LICENSE and package.json, and no tests', () => {
    // Every workspace package not marked private (test/unit/packages.test.ts names them).
    expect(packed.map((p) => p.name).sort()).toEqual(publishablePackages(root).map((p) => p.manifest.name).sort());
    expect(packed.length).toBeGreaterThanOrEqual(13);
    for (const p of packed) {
      const files = p.files.map((f) => f.path);
      expect({ name: p.name, has: ['LICENSE', 'package.json', 'dist/index.js', 'dist/index.d.ts', 'dist/index.js.map', 'src/index.ts'].filter((f) => files.includes(f)) }).toEqual({ name: p.name, has: ['LICENSE', 'package.json', 'dist/index.js', 'dist/index.d.ts', 'dist/index.js.map', 'src/index.ts'] });
      expect(files.filter((f) => /(^|\/)test\/|\.test\.|tsbuildinfo/.test(f))).toEqual([]);
    }
    const broker = packed.find((p) => p.name === '@warren/broker')?.files.map((f) => f.path) ?? [];
    expect(broker).toEqual(expect.arrayContaining(['bin/warren-broker.js', 'dist/main.js', 'dist/console-assets/app.js']));
  });

  it('installs the @warren packages from the tarballs, never from a registry', () => {
    const lock = JSON.parse(readFileSync(path.join(app, 'package-lock.json'), 'utf8')) as { packages: Record<string, { resolved?: string }> };
    const warren = Object.entries(lock.packages).filter(([k]) => k.includes('node_modules/@warren/'));
    expect(warren.map(([k]) => k).sort()).toEqual(packed.map((p) => `node_modules/${p.name}`).sort());
    for (const [, entry] of warren) expect(entry.resolved).toMatch(/^file:.*\.tgz$/);
  });
});

describe('the installed packages', () => {
  it('run a service and a client over RabbitMQ', async () => {
    await startUntil(process.execPath, ['serve.cjs'], appEnv(), (l) => l === 'ready');
    expect(JSON.parse(await run(process.execPath, ['call.cjs'], app, appEnv()))).toBe(9);
    // The CLI's bin, installed by npm into node_modules/.bin, over AMQP.
    expect((await run(path.join(app, 'node_modules/.bin/warren'), ['--via', 'amqp', 'call', 'add', '4', '5'], app, appEnv())).trim()).toBe('9');
  }, 120_000);

  it('start the broker from its bin, answering POST /rpc', async () => {
    await startUntil(process.execPath, ['serve.cjs'], appEnv(), (l) => l === 'ready');
    const env = { ...appEnv(), GATEWAY_AUTH: 'none', GATEWAY_PORT: '0' };
    const { line } = await startUntil(path.join(app, 'node_modules/.bin/warren-broker'), [], env, (l) => l.includes('broker ready'));
    const { url } = JSON.parse(line) as { url: string };
    const res = await fetch(`${url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', method: 'add', params: [4, 5], id: 1 }) });
    expect(await res.json()).toEqual({ jsonrpc: '2.0', result: 9, id: 1 });
  }, 120_000);

  it('type-check from a TypeScript project through the exports maps', async () => {
    await run(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', '.', '--typeRoots', path.join(root, 'node_modules/@types')], app);
  }, 120_000);

  it('ship every source their source maps name', () => {
    let maps = 0;
    for (const p of packed) {
      const dir = path.join(app, 'node_modules', p.name);
      for (const file of p.files.map((f) => f.path).filter((f) => f.endsWith('.js.map'))) {
        const map = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as { sourceRoot?: string; sources: string[] };
        for (const source of map.sources) {
          const resolved = path.resolve(path.dirname(path.join(dir, file)), map.sourceRoot ?? '', source);
          expect({ file: `${p.name}/${file}`, source, shipped: resolved.startsWith(dir + path.sep) && existsSync(resolved) }).toEqual({ file: `${p.name}/${file}`, source, shipped: true });
        }
        maps += 1;
      }
    }
    expect(maps).toBeGreaterThan(50);
  });
});
