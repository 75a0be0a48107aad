// There is no Docker engine on our machines, so docker-compose.yml and the
// Dockerfile are checked against the code instead: every command names a
// program that exists (after the dist/ → src/ build mapping), every build
// target is a Dockerfile stage, the ports and URLs agree with the code's
// defaults, and every environment variable set is one the program reads.
// compose-safety.test.ts holds both compose files to the shared-host rules
// (schema, env readers, loopback ports, credentials, volumes, health, limits).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { gatewayDefaults } from '../../broker/src/options';
import { cliDefaults } from '../../libs/cli/src/program';
import { DEFAULT_AMQP_URL, DEFAULT_REDIS_URL } from '../../libs/testkit/src/env';
import { composeEnv as env, composeProgram as program, parsePort, readCompose, readsEnv, repoRoot as root, type ComposeService } from '../support/compose';

const compose = readCompose('docker-compose.yml');
const dockerfile = readFileSync(path.join(root, 'Dockerfile'), 'utf8');
const services = Object.entries(compose.services);
const apps = services.filter(([, s]) => s.build !== undefined);

function stages(): string[] {
  return [...dockerfile.matchAll(/^FROM\s+\S+\s+AS\s+(\S+)/gim)].map((m) => m[1] as string);
}

describe('docker-compose.yml', () => {
  it('runs RabbitMQ (management image) and Redis with health checks', () => {
    const rabbit = compose.services['rabbitmq'];
    const redis = compose.services['redis'];
    expect(rabbit?.image).toMatch(/^rabbitmq:[\w.-]*management/);
    expect(rabbit?.healthcheck?.test).toBeDefined();
    expect((rabbit?.ports ?? []).map(parsePort)).toContainEqual({ hostIp: '127.0.0.1', published: '5672', target: '5672' });
    expect(redis?.image).toMatch(/^redis:/);
    expect(redis?.healthcheck?.test).toBeDefined();
    expect((redis?.ports ?? []).map(parsePort)).toContainEqual({ hostIp: '127.0.0.1', published: '6379', target: '6379' });
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
    // The settings every service shares are read by @warren/amqp's readServiceEnv, on the main's behalf.
    for (const name of Object.keys(env(s))) expect({ name, read: readsEnv(s, name) }).toEqual({ name, read: true });
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
    expect((broker.ports ?? []).map(parsePort)).toContainEqual({ hostIp: '127.0.0.1', published: String(gatewayDefaults.port), target: String(gatewayDefaults.port) });
    expect(env(broker)['GATEWAY_PORT']).toBe(String(gatewayDefaults.port));
    // Inside a container the gateway must listen beyond loopback to be reachable through the port
    // mapping (which binds to loopback on the host).
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

  it('builds on a Node LTS line that is supported (even major, 22 or later), one the engines field allows', () => {
    const image = /^ARG NODE_IMAGE=node:(\d+)-\S+$/m.exec(dockerfile);
    const major = Number(image?.[1]);
    expect(major % 2).toBe(0);
    expect(major).toBeGreaterThanOrEqual(22);
    const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { engines: { node: string } };
    const floor = Number(/^>=(\d+)/.exec(manifest.engines.node)?.[1]);
    expect(floor).toBeLessThanOrEqual(major);
  });

  it('keeps local state out of the build context', () => {
    const ignore = readFileSync(path.join(root, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim());
    for (const entry of ['.git', '**/node_modules', '**/dist', '**/.env']) expect(ignore).toContain(entry);
  });
});

describe('LICENSE', () => {
  it('is the MIT licence package.json names, for the Warren contributors', () => {
    const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { license: string };
    expect(manifest.license).toBe('MIT');
    const text = readFileSync(path.join(root, 'LICENSE'), 'utf8');
    expect(text).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} Warren contributors\n/);
    expect(text).toContain('THE SOFTWARE IS PROVIDED "AS IS"');
  });
});
