// jest globalSetup of the `integration` project (jest.config.js): makes sure
// RabbitMQ and Redis are reachable before any integration test runs, starting
// them with testcontainers when nothing answers and Docker is available; see
// scripts/ensure-services.ts. On a machine that runs them already it takes a few ms.
import { ensureServices } from '../../scripts/ensure-services';

export default async function globalSetup(): Promise<void> {
  const provided = await ensureServices();
  if (provided.rabbitmq === 'container' || provided.redis === 'container') {
    process.stderr.write(`\nintegration: started with testcontainers: ${Object.entries(provided).filter(([, how]) => how === 'container').map(([dep]) => dep).join(', ')} (AMQP_URL=${process.env['AMQP_URL'] ?? ''}, REDIS_URL=${process.env['REDIS_URL'] ?? ''})\n`);
  }
}
