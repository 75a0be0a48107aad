// Installable by others: builds the repository, packs each publishable package with `npm pack`,
// installs the tarballs into a fresh project outside the repository (third-party dependencies from
// the npm registry, through the npm cache), and runs a service, a client, the broker's bin and the
// CLI's bin from them against the local RabbitMQ. Also: the tarballs hold what they must (dist,
// src, LICENSE) and nothing of the tests; every source map of an installed file resolves to a
// shipped source; the declarations resolve through the `exports` maps.
// `npm run test:pack` (jest.late.config.js): it writes dist/, so .ci/run runs it after `npm test`,
// never beside tests that start the `warren` bin (which prefers a built dist/).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Teardown, amqpUrl } from '@warren/testkit';
import { TestNamespace } from '../support/amqp';
import { callCjs, consumerTs, serveCjs, tsconfigJson } from './app-files';

const root = path.resolve(__dirname, '../..');
const publishable = ['libs/config', 'libs/jsonrpc', 'libs/calls', 'libs/logger', 'libs/redis', 'libs/amqp-transport', 'libs/amqp', 'libs/inflight', 'libs/eventlog', 'libs/schedules', 'libs/tracing-node', 'libs/cli', 'broker'];
const td = new Teardown();
const ns = new TestNamespace();
ns.service('calc');
ns.service('warren-broker');
let work: string;
let app: string;
let packed: { name: string; filename: string; files: { path: string }[] }[];

/** Runs a command to its end; rejects with its output when it fails. */
function run(cmd: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { cwd, env, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${cmd} ${args.join(' ')} failed: ${err.message}\n${stdout}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

/** Starts a long-running command and resolves once a stdout line passes `ready`; stopped (SIGTERM) by the teardown. */
async function startUntil(cmd: string, args: readonly string[], env: NodeJS.ProcessEnv, ready: (line: string) => boolean): Promise<{ child: ChildProcess; line: string }> {
  const child = spawn(cmd, args, { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const stderr: string[] = [];
  child.stderr.on('data', (b: Buffer) => stderr.push(b.toString()));
  td.add(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  });
  const lines = createInterface({ input: child.stdout });
  const exited = once(child, 'exit').then(([code]) => {
    throw new Error(`${args.join(' ')} exited (${String(code)}) before it was ready: ${stderr.join('')}`);
  });
  const found = new Promise<string>((resolve) => lines.on('line', (l) => ready(l) && resolve(l)));
  return { child, line: await Promise.race([found, exited]) };
}

const appEnv = (): NodeJS.ProcessEnv => ({ ...process.env, AMQP_URL: amqpUrl(), WARREN_NAMESPACE: ns.namespace, REDIS_URL: '', NODE_PATH: '' });

beforeAll(async () => {
  td.add(() => ns.destroy());
  // Built as `npm run build` builds it (tsc -b tsconfig.build.json, then the console bundle); a
  // checkout that had no dist/ gets none back (the `warren` bin would prefer a stale one later).
  if (!existsSync(path.join(root, 'libs/jsonrpc/dist/index.js'))) td.add(() => run(process.execPath, [require.resolve('typescript/bin/tsc'), '-b', '--clean', 'tsconfig.build.json'], root).then(() => undefined));
  await run('npm', ['run', 'build'], root);
  work = mkdtempSync(path.join(os.tmpdir(), 'warren-pack-'));
  td.add(() => rmSync(work, { recursive: true, force: true }));
  const tarballs = path.join(work, 'tarballs');
  app = path.join(work, 'app');
  mkdirSync(tarballs);
  mkdirSync(app);
  const wsArgs = publishable.flatMap((d) => ['-w', d]);
  packed = JSON.parse(await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', tarballs, ...wsArgs], root)) as typeof packed;
  // A project of its own, outside the repository: nothing resolves to the workspace.
  writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'warren-pack-check', version: '1.0.0', private: true }));
  const files = readdirSync(tarballs).filter((f) => f.endsWith('.tgz')).map((f) => path.join(tarballs, f));
  await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', ...files], app);
  writeFileSync(path.join(app, 'serve.cjs'), serveCjs);
  writeFileSync(path.join(app, 'call.cjs'), callCjs);
  writeFileSync(path.join(app, 'consumer.ts'), consumerTs);
  writeFileSync(path.join(app, 'tsconfig.json'), tsconfigJson);
}, 900_000);

afterAll(() => td.run(), 60_000);

describe('npm pack of the publishable packages', () => {
  it('packs each with dist (js, declarations, maps), src, LICENSE and package.json, and no tests', () => {
    expect(packed.map((p) => p.name).sort()).toEqual(['@warren/amqp', '@warren/amqp-transport', '@warren/broker', '@warren/calls', '@warren/cli', '@warren/config', '@warren/eventlog', '@warren/inflight', '@warren/jsonrpc', '@warren/logger', '@warren/redis', '@warren/schedules', '@warren/tracing-node']);
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
