// jest globalSetup of the `rmq4` project (jest.late.config.js): boots Debian 13's RabbitMQ 4.x node
// with RabbitMQ 4.3's denials (scripts/rabbitmq4.ts, libs/testkit Rabbit4Node) unless it already
// runs (.ci/run starts it before the stage), and points every test at it: AMQP_URL, and RABBITMQCTL
// for the tests that shell out to rabbitmqctl (test/integration/faults/rabbitmqctl.ts). Redis stays
// the machine's (REDIS_URL). AMQP_DENIES_DEPRECATED=1 says the broker refuses what 4.3 refuses
// (libs/amqp-transport/test/memory-parity.int.test.ts). The jest workers inherit this process's environment.
// Source paths: jest runs a global setup without the moduleNameMapper.
import { Rabbit4Node } from '../../libs/testkit/src/rabbit4-node';
import { rabbit4FromEnv } from '../../scripts/rabbitmq4';

/** Shared with global-teardown.ts (jest runs both in this process): the node, when this setup booted it. */
declare global {
  var warrenRabbit4: Rabbit4Node | undefined;
}

export default async function globalSetup(): Promise<void> {
  if (!Rabbit4Node.available()) throw new Error('the rmq4 stage needs root (it debootstraps and chroots Debian 13 to run its RabbitMQ 4.x)');
  const node = rabbit4FromEnv(process.env, (line) => process.stderr.write(`\nrmq4: ${line}`));
  const { booted } = await node.start();
  globalThis.warrenRabbit4 = booted ? node : undefined;
  process.env['AMQP_URL'] = node.url;
  process.env['RABBITMQCTL'] = node.ctlCommand().join(' ');
  // The node denies what 4.3 denies: the memory-parity test adds its scenarios for those refusals.
  process.env['AMQP_DENIES_DEPRECATED'] = '1';
  process.stderr.write(`\nrmq4: AMQP_URL=${node.url} RABBITMQCTL="${process.env['RABBITMQCTL']}"\n`);
}
