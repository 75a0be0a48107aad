// There is no Docker engine on our machines, so docker-compose.yml and the
// Dockerfile are checked against the code instead: every command names a
// program that exists (after the dist/ → src/ build mapping), every build
// target is a Dockerfile stage, the ports and URLs agree with the code's
// defaults, and every environment variable set is one the program reads.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { gatewayDefaults } from '../../broker/src/options';
import { cliDefaults } from '../../libs/cli/src/program';
import { DEFAULT_AMQP_URL, DEFAULT_REDIS_URL } from '../../libs/testkit/src/env';

const root = path.resolve(__dirname, '..', '..');

interface ComposeService {
  image?: string;
  build?: { context?: string; dockerfile?: string; target?: string } | string;
  command?: string[] | string;
  environment?: Record<string, string | number> | string[];
  ports?: string[];
  depends_on?: Record<string, { condition?: string }> | string[];
  healthcheck?: { test?: string[] | string };
  deploy?: { replicas?: number };
}

const compose = parse(readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, ComposeService> };
const dockerfile = readFileSync(path.join(root, 'Dockerfile'), 'utf8');
const services = Object.entries(compose.services);
const apps = services.filter(([, s]) => s.build !== undefined);

function env(s: ComposeService): Record<string, string> {
  if (Array.isArray(s.environment)) return Object.fromEntries(s.environment.map((e) => [e.split('=')[0] ?? e, e.split('=').slice(1).join('=')]));
  return Object.fromEntries(Object.entries(s.environment ?? {}).map(([k, v]) => [k, String(v)]));
}

/** `node services/x/dist/main.js` → the package folder and the TypeScript source it is built from. */
function program(s: ComposeService): { pkg: string; source: string } {
  const command = Array.isArray(s.command) ? s.command : (s.command ?? '').split(/\s+/);
  expect(command[0]).toBe('node');
  const script = command[1] ?? '';
  const match = /^(.+)\/dist\/(.+)\.js$/.exec(script);
  if (!match) throw new Error(`command ${JSON.stringify(command)} does not run a dist/*.js file`);
  return { pkg: match[1] as string, source: path.join(match[1] as string, 'src', `${match[2] as string}.ts`) };
}

function sourceText(dir: string): string {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const p = path.join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (p.endsWith('.ts')) out.push(readFileSync(p, 'utf8'));
    }
  };
  walk(dir);
  return out.join('\n');
}

function stages(): string[] {
  return [...dockerfile.matchAll(/^FROM\s+\S+\s+AS\s+(\S+)/gim)].map((m) => m[1] as string);
}

describe('docker-compose.yml', () => {
  it('runs RabbitMQ (management image) and Redis with health checks', () => {
    const rabbit = compose.services['rabbitmq'];
    const redis = compose.services['redis'];
    expect(rabbit?.image).toMatch(/^rabbitmq:[\w.-]*management/);
    expect(rabbit?.healthcheck?.test).toBeDefined();
    expect(rabbit?.ports).toContain('5672:5672');
    expect(redis?.image).toMatch(/^redis:/);
    expect(redis?.healthcheck?.test).toBeDefined();
    expect(redis?.ports).toContain('6379:6379');
  });

  it('has the broker, calculator ×2, audit (and a second subscriber) and jobs ×3', () => {
    expect(compose.services['broker']).toBeDefined();
    expect(compose.services['calculator']?.deploy?.replicas).toBe(2);
    expect(compose.services['audit']).toBeDefined();
    expect(compose.services['jobs']?.deploy?.replicas).toBe(3);
    const subscribers = apps.filter(([, s]) => program(s).pkg === 'services/audit').map(([, s]) => env(s)['SERVICE_NAME']);
    expect(new Set(subscribers).size).toBeGreaterThanOrEqual(2);
  });

  it.each(apps.map(([name, s]) => [name, s] as const))('%s runs a program that exists in the repository', (_name, s) => {
    const { pkg, source } = program(s);
    expect(existsSync(path.join(root, source))).toBe(true);
    const manifest = JSON.parse(readFileSync(path.join(root, pkg, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
    // The package builds to dist/ with tsc -b, which the Dockerfile runs for every package in tsconfig.build.json.
    expect(manifest.scripts?.['build']).toMatch(/tsc -b/);
    const build = JSON.parse(readFileSync(path.join(root, 'tsconfig.build.json'), 'utf8')) as { references: { path: string }[] };
    expect(build.references.map((r) => r.path)).toContain(pkg);
  });

  it.each(apps.map(([name, s]) => [name, s] as const))('%s is built from a Dockerfile target that exists, and waits for healthy dependencies', (_name, s) => {
    const build = typeof s.build === 'string' ? { context: s.build } : (s.build ?? {});
    expect(path.resolve(root, build.context ?? '.')).toBe(root);
    expect(build.dockerfile ?? 'Dockerfile').toBe('Dockerfile');
    expect(stages()).toContain(build.target);
    const deps = s.depends_on as Record<string, { condition?: string }>;
    expect(deps['rabbitmq']?.condition).toBe('service_healthy');
    expect(deps['redis']?.condition).toBe('service_healthy');
  });

  it.each(apps.map(([name, s]) => [name, s] as const))('%s sets only environment variables its code reads', (_name, s) => {
    const own = sourceText(path.join(root, program(s).pkg, 'src'));
    // The settings every service shares are read by @warren/amqp's readServiceEnv, on the main's behalf.
    const code = own.includes('readServiceEnv') ? own + readFileSync(path.join(root, 'libs', 'amqp', 'src', 'service-env.ts'), 'utf8') : own;
    for (const name of Object.keys(env(s))) expect({ name, read: code.includes(`'${name}'`) || code.includes(`${name}:`) }).toEqual({ name, read: true });
  });

  it('points every program at the compose RabbitMQ and Redis on the ports the code uses by default', () => {
    const amqpPort = new URL(DEFAULT_AMQP_URL).port;
    const redisPort = new URL(DEFAULT_REDIS_URL).port;
    for (const [, s] of apps) {
      const e = env(s);
      expect(new URL(e['AMQP_URL'] ?? '').hostname).toBe('rabbitmq');
      expect(new URL(e['AMQP_URL'] ?? '').port).toBe(amqpPort);
      expect(new URL(e['REDIS_URL'] ?? '').hostname).toBe('redis');
      expect(new URL(e['REDIS_URL'] ?? '').port).toBe(redisPort);
    }
  });

  it('publishes the gateway on the port the broker and the CLI use by default (18001)', () => {
    const broker = compose.services['broker'] as ComposeService;
    expect(gatewayDefaults.port).toBe(18001);
    expect(new URL(cliDefaults.gateway).port).toBe(String(gatewayDefaults.port));
    expect(broker.ports).toContain(`${gatewayDefaults.port}:${gatewayDefaults.port}`);
    expect(env(broker)['GATEWAY_PORT']).toBe(String(gatewayDefaults.port));
    // Inside a container the gateway must listen beyond loopback to be reachable through the port mapping.
    expect(env(broker)['GATEWAY_HOST']).toBe('0.0.0.0');
  });
});

describe('Dockerfile', () => {
  it('is multi-stage, installs production dependencies with npm ci --omit=dev and runs as a non-root user', () => {
    expect(stages().length).toBeGreaterThanOrEqual(2);
    expect(dockerfile).toMatch(/npm ci --omit=dev/);
    const runtime = dockerfile.slice(dockerfile.search(/^FROM\s+\S+\s+AS\s+runtime/im));
    expect(runtime).toMatch(/^USER\s+(?!root\b|0\b)\S+/m);
  });

  it('builds with the npm build script and copies only dist/ into the runtime image', () => {
    const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(manifest.scripts['build']).toContain('tsconfig.build.json');
    expect(dockerfile).toMatch(/RUN npm run build/);
    expect(dockerfile).toMatch(/cp -r "\$d\/dist"/);
  });

  it('copies the folders every workspace lives in', () => {
    const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { workspaces: string[] };
    for (const ws of manifest.workspaces) {
      const folder = ws.replace(/\/\*$/, '');
      expect(dockerfile).toContain(`COPY ${folder}/ ${folder}/`);
    }
  });

  it('keeps local state out of the build context', () => {
    const ignore = readFileSync(path.join(root, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim());
    for (const entry of ['.git', '**/node_modules', '**/dist']) expect(ignore).toContain(entry);
  });
});
