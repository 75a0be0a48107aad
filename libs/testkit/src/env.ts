/** Default broker URL when AMQP_URL is unset: the local docker-compose RabbitMQ. */
export const DEFAULT_AMQP_URL = 'amqp://guest:guest@127.0.0.1:5672';
/** Default store URL when REDIS_URL is unset: the local docker-compose Redis. */
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

/**
 * RabbitMQ URL for integration tests: `AMQP_URL` if set (CI points it at its
 * service container), otherwise the local default, so tests need no config.
 */
export function amqpUrl(): string {
  return process.env['AMQP_URL'] || DEFAULT_AMQP_URL;
}

/**
 * Redis URL for integration tests: `REDIS_URL` if set, otherwise the local
 * default. An empty variable counts as unset.
 */
export function redisUrl(): string {
  return process.env['REDIS_URL'] || DEFAULT_REDIS_URL;
}
