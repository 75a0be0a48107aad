// docker-compose.cluster.yml, checked against the code and against
// docker-compose.yml (no Docker engine here): three RabbitMQ nodes that form
// one cluster, Redis, and the example programs, each given every node.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { readServiceEnv, resolveServiceOptions } from '@warren/amqp';
import { AmqpConnection } from '@warren/amqp-transport';
import { composeEnv, composeProgram, exampleEnv, parsePort, readCompose, readsEnv, repoRoot, type ComposeService } from '../support/compose';

const cluster = readCompose('docker-compose.cluster.yml');
const single = readCompose('docker-compose.yml');
const rabbits = Object.entries(cluster.services).filter(([, s]) => s.image?.startsWith('rabbitmq:'));
const apps = Object.entries(cluster.services).filter(([, s]) => s.build !== undefined);

/** Node names the cluster config says to join (`cluster_formation.classic_config.nodes.N = rabbit@host`). */
function peerNodes(s: ComposeService): string[] {
  const mount = (s.volumes ?? []).find((v) => v.includes('/etc/rabbitmq/conf.d/'));
  const [hostPath = ''] = (mount ?? '').split(':');
  const conf = readFileSync(path.join(repoRoot, hostPath), 'utf8');
  expect(conf).toMatch(/^cluster_formation\.peer_discovery_backend = classic_config$/m);
  return [...conf.matchAll(/^cluster_formation\.classic_config\.nodes\.\d+ = (\S+)$/gm)].map((m) => m[1] as string);
}

describe('docker-compose.cluster.yml', () => {
  it('runs three RabbitMQ nodes that find each other by hostname and share one Erlang cookie', () => {
    expect(rabbits).toHaveLength(3);
    const hosts = rabbits.map(([, s]) => s.hostname);
    const cookies = new Set(rabbits.map(([, s]) => composeEnv(s)['RABBITMQ_ERLANG_COOKIE']));
    expect(cookies.size).toBe(1);
    // From .env (compose-safety.test.ts: never written in the file).
    expect([...cookies][0]).toBe(exampleEnv['RABBITMQ_ERLANG_COOKIE']);
    for (const [, s] of rabbits) {
      expect(s.healthcheck?.test).toBeDefined();
      expect(peerNodes(s).sort()).toEqual(hosts.map((h) => `rabbit@${h}`).sort());
    }
    // AMQP of each node on its own host port, the first on the single-node file's 5672.
    const published = rabbits.map(([, s]) => (s.ports ?? []).map(parsePort).find((p) => p.target === '5672')?.published);
    expect(new Set(published).size).toBe(3);
    expect(published).toContain('5672');
    expect(cluster.services['redis']?.image).toMatch(/^redis:/);
  });

  it('runs the same programs as docker-compose.yml', () => {
    const programs = (c: typeof cluster): string[] => [...new Set(Object.values(c.services).filter((s) => s.build !== undefined).map((s) => composeProgram(s).pkg))].sort();
    expect(programs(cluster)).toEqual(programs(single));
    for (const [, s] of apps) expect(existsSync(path.join(repoRoot, composeProgram(s).source))).toBe(true);
  });

  it.each(apps.map(([name, s]) => [name, s] as const))('%s is given every node, waits for all of them, and sets only variables its code reads', (_name, s) => {
    const e = composeEnv(s);
    const urls = (e['AMQP_URL'] ?? '').split(',');
    expect(urls.map((u) => new URL(u).hostname).sort()).toEqual(rabbits.map(([, r]) => r.hostname).sort());
    for (const u of urls) expect(new URL(u).port).toBe('5672');
    const deps = s.depends_on as Record<string, { condition?: string }>;
    for (const [name] of [...rabbits, ['redis']]) expect(deps[name as string]?.condition).toBe('service_healthy');
    for (const name of Object.keys(e)) expect({ name, read: readsEnv(s, name) }).toEqual({ name, read: true });
  });

  it('spreads the programs\' first nodes over the cluster', () => {
    const firsts = new Set(apps.map(([, s]) => new URL((composeEnv(s)['AMQP_URL'] ?? '').split(',')[0] ?? '').hostname));
    expect(firsts.size).toBe(3);
  });

  it('makes services declare quorum queues: the URL list names several nodes', () => {
    // What a service main does with its environment: readServiceEnv splits AMQP_URL, the connection is clustered.
    for (const [, s] of apps) {
      const { amqpUrls } = readServiceEnv(composeEnv(s), { name: 'x', prefetch: 1 });
      const connection = new AmqpConnection({ urls: amqpUrls });
      expect(resolveServiceOptions({ name: 'x' }, { clustered: connection.clustered }).queueType).toBe('quorum');
    }
  });
});
