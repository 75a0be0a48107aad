/**
 * @warren/redis — the ioredis client setup Warren's Redis users share (the in-flight store, the
 * schedules, the event log): command timeouts a blocked event loop cannot fake.
 */
export { stallTolerantTimeouts, type RedisClient } from './timeouts';
export { createRedis, type RedisClientOptions } from './create';
