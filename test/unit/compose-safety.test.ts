// Both compose files, held to what a team needs on a shared host (issue 26):
// valid against the Compose Specification's JSON Schema; every program's
// environment accepted by the env reader its main uses; ports on loopback
// unless WARREN_BIND_ADDRESS opens them; credentials only from .env (and a
// missing one stops Compose); RabbitMQ 4.x; data in volumes, Redis with AOF;
// a healthcheck and resource limits on every long-running service.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv from 'ajv';
import {
  MissingVariableError, composeEnv, composeText, exampleEnv, parsePort, readCompose, readComposeRaw, repoRoot, type ComposeFile, type ComposeService,
} from '../support/compose';
import { readProgramEnv } from '../support/compose-programs';

const files = ['docker-compose.yml', 'docker-compose.cluster.yml'] as const;
/** The variables of .env.example that hold secrets: everything but where ports bind. */
const secretVars = Object.keys(exampleEnv).filter((v) => v !== 'WARREN_BIND_ADDRESS');
/** The values that must never be written in a compose file (the user name is no secret: `warren` is fine). */
const secretValues = secretVars.filter((v) => v !== 'RABBITMQ_USER').map((v) => exampleEnv[v] as string);

const schema = JSON.parse(readFileSync(path.join(repoRoot, 'test', 'support', 'compose-spec', 'compose-spec.json'), 'utf8')) as Record<string, unknown>;
// The schema names its draft-07 meta-schema by a URI ajv does not register ("deprecated" is not a draft-07
// keyword either): validate with the draft-07 vocabulary, unknown annotation keywords allowed.
delete schema['$schema'];
const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);

const services = (c: ComposeFile): [string, ComposeService][] => Object.entries(c.services);
const apps = (c: ComposeFile): [string, ComposeService][] => services(c).filter(([, s]) => s.build !== undefined);
const withoutBind = Object.fromEntries(Object.entries(exampleEnv).filter(([k]) => k !== 'WARREN_BIND_ADDRESS'));

describe.each(files)('%s', (file) => {
  const compose = readCompose(file);
  const raw = readComposeRaw(file);
  const text = composeText(file);

  it('is valid against the Compose Specification JSON Schema (after substitution from .env.example)', () => {
    const ok = validate(compose);
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
  });

  it('the schema check can fail: a misspelt key is refused', () => {
    const broken = JSON.parse(JSON.stringify(compose)) as { services: Record<string, Record<string, unknown>> };
    (broken.services['redis'] as Record<string, unknown>)['healthchek'] = { test: ['CMD', 'true'] };
    expect(validate(broken)).toBe(false);
  });

  it.each(apps(compose).map(([name, s]) => [name, s] as const))('%s: its main\'s env reader accepts its environment, with the credentials of .env', (_name, s) => {
    const read = readProgramEnv(s);
    for (const u of read.amqpUrls) {
      const url = new URL(u);
      expect([url.username, url.password]).toEqual([exampleEnv['RABBITMQ_USER'], exampleEnv['RABBITMQ_PASSWORD']]);
    }
    expect(new URL(read.redisUrl ?? '').password).toBe(exampleEnv['REDIS_PASSWORD']);
    if (read.pkg === 'broker') {
      // The broker starts only with auth configured: tokens from .env, client and operator.
      expect(read.read).toMatchObject({ auth: 'token' });
      expect((read.read as { tokens?: unknown }).tokens).toEqual([{ token: exampleEnv['GATEWAY_TOKENS'] }, { token: exampleEnv['GATEWAY_OPERATOR_TOKENS'], operator: true }]);
    } else {
      // Loopback, or every interface of the container for Prometheus to scrape (docker-compose.yml's
      // observability profile) but then never published on the host.
      expect(read.ops).toEqual({ port: read.healthPort, host: expect.stringMatching(/^(127\.0\.0\.1|0\.0\.0\.0)$/) });
      if (read.ops?.host === '0.0.0.0') expect(s.ports ?? []).toEqual([]);
    }
  });

  it('publishes every port on 127.0.0.1 by default, and on WARREN_BIND_ADDRESS when .env sets it', () => {
    const byDefault = readCompose(file, withoutBind);
    const opened = readCompose(file, { ...withoutBind, WARREN_BIND_ADDRESS: '0.0.0.0' });
    const published = (c: ComposeFile): string[] => services(c).flatMap(([, s]) => (s.ports ?? []).map((p) => parsePort(p).hostIp ?? 'every interface'));
    expect(published(byDefault).length).toBeGreaterThan(0);
    expect(new Set(published(byDefault))).toEqual(new Set(['127.0.0.1']));
    expect(new Set(published(opened))).toEqual(new Set(['0.0.0.0']));
    expect(text).not.toMatch(/^\s*-\s*"?\d+:\d+"?\s*$/m);
  });

  it('holds no credential: secrets come from .env, each through ${VAR:?...}, and a missing one stops Compose', () => {
    expect(text).not.toMatch(/guest/i);
    for (const value of secretValues) expect(text).not.toContain(value);
    const referenced = secretVars.filter((v) => text.includes(`\${${v}`));
    expect(referenced).toEqual(expect.arrayContaining(['RABBITMQ_USER', 'RABBITMQ_PASSWORD', 'REDIS_PASSWORD', 'GATEWAY_TOKENS']));
    for (const v of referenced) {
      // Every use fails loudly when unset: no `${VAR}` or `${VAR:-default}` that would run with an empty secret.
      expect({ v, uses: [...text.matchAll(new RegExp(`\\$\\{${v}([^}]*)\\}`, 'g'))].map((m) => (m[1] as string).slice(0, 2)) }).toEqual({ v, uses: expect.arrayContaining([':?']) });
      expect([...text.matchAll(new RegExp(`\\$\\{${v}(?!:\\?)`, 'g'))]).toHaveLength(0);
      const { [v]: _gone, ...rest } = exampleEnv;
      expect(() => readCompose(file, rest)).toThrow(MissingVariableError);
      expect(() => readCompose(file, rest)).toThrow(new RegExp(`\\b${v}\\b`));
    }
    // Values that are secrets by name are references in the file as written, never literals.
    for (const [, s] of services(raw)) {
      for (const [key, value] of Object.entries(composeEnv(s))) {
        if (/PASS|PASSWORD|COOKIE|TOKENS|SECRET|AUTH$/.test(key) && key !== 'GATEWAY_AUTH') expect({ key, value }).toEqual({ key, value: expect.stringMatching(/^\$\{[A-Z_]+:\?[^}]*\}$/) });
        for (const url of value.split(',').filter((u) => /^\w+:\/\//.test(u))) {
          const userinfo = /^\w+:\/\/([^@/]*)@/.exec(url)?.[1];
          if (userinfo !== undefined) expect({ key, userinfo }).toEqual({ key, userinfo: expect.stringMatching(/^(\$\{[A-Z_]+:\?[^}]*\})?:\$\{[A-Z_]+:\?[^}]*\}$/) });
        }
      }
    }
  });

  it('runs RabbitMQ 4.x (management image) and a current Redis with AOF on', () => {
    const rabbits = services(compose).filter(([, s]) => s.image?.startsWith('rabbitmq:'));
    expect(rabbits.length).toBeGreaterThan(0);
    for (const [, s] of rabbits) expect(s.image).toMatch(/^rabbitmq:4\.\d+(\.\d+)?-management$/);
    const redis = compose.services['redis'] as ComposeService;
    expect(Number(/^redis:(\d+)\./.exec(redis.image ?? '')?.[1])).toBeGreaterThanOrEqual(7);
    const command = Array.isArray(redis.command) ? redis.command : [];
    expect(command[command.indexOf('--appendonly') + 1]).toBe('yes');
    expect(command[command.indexOf('--requirepass') + 1]).toBe(exampleEnv['REDIS_PASSWORD']);
  });

  it('keeps RabbitMQ\'s and Redis\'s data in named volumes', () => {
    const declared = Object.keys(compose.volumes ?? {});
    const mountedAt = (s: ComposeService, target: string): string | undefined => (s.volumes ?? []).map((v) => v.split(':')).find((p) => p[1] === target)?.[0];
    for (const [, s] of services(compose).filter(([, x]) => x.image?.startsWith('rabbitmq:') || x.image?.startsWith('redis:'))) {
      const source = mountedAt(s, s.image?.startsWith('redis:') ? '/data' : '/var/lib/rabbitmq');
      expect(declared).toContain(source);
    }
    // One volume per RabbitMQ node: nodes never share a data directory.
    const rabbitVolumes = services(compose).filter(([, s]) => s.image?.startsWith('rabbitmq:')).map(([, s]) => mountedAt(s, '/var/lib/rabbitmq'));
    expect(new Set(rabbitVolumes).size).toBe(rabbitVolumes.length);
  });

  it.each(services(compose).map(([name, s]) => [name, s] as const))('%s: has a healthcheck, a restart policy and resource limits', (_name, s) => {
    expect(s.healthcheck?.disable).not.toBe(true);
    expect(Array.isArray(s.healthcheck?.test) ? s.healthcheck?.test[0] : undefined).toMatch(/^CMD(-SHELL)?$/);
    expect(s.restart).toBe('unless-stopped');
    const limits = s.deploy?.resources?.limits;
    expect({ memory: limits?.memory ?? s.mem_limit, cpus: limits?.cpus ?? s.cpus }).toEqual({ memory: expect.stringMatching(/^\d+[KMG]$/), cpus: expect.stringMatching(/^\d+(\.\d+)?$/) });
  });

  it.each(apps(compose).map(([name, s]) => [name, s] as const))('%s: its healthcheck asks /readyz on the port its process serves it on', (_name, s) => {
    const read = readProgramEnv(s);
    const probe = (s.healthcheck?.test as string[]).join(' ');
    const url = /fetch\('([^']+)'\)/.exec(probe)?.[1] ?? '';
    expect(new URL(url).pathname).toBe('/readyz');
    expect(Number(new URL(url).port)).toBe(read.healthPort);
    expect(new URL(url).hostname).toBe('127.0.0.1');
  });
});

it('.env is kept out of git and of the Docker build context; .env.example is committed with every variable the files use', () => {
  const lines = (f: string): string[] => readFileSync(path.join(repoRoot, f), 'utf8').split('\n').map((l) => l.trim());
  expect(lines('.gitignore')).toContain('.env');
  expect(lines('.dockerignore')).toEqual(expect.arrayContaining(['**/.env', '**/.env.*']));
  const used = new Set(files.flatMap((f) => [...composeText(f).matchAll(/\$\{([A-Z_]+)/g)].map((m) => m[1] as string)));
  expect([...used].sort()).toEqual(Object.keys(exampleEnv).sort());
});
