/**
 * @warren/testkit — helpers for Warren's unit and integration tests: a TCP
 * fault-injection proxy, broker/store URLs, unique names, a teardown
 * registry, waits with clear timeouts, a blocked event loop on demand, and tsx
 * child processes.
 */
export { FaultProxy, type FaultProxyOptions, type FaultProxyTarget } from './fault-proxy';
export { amqpUrl, redisUrl, DEFAULT_AMQP_URL, DEFAULT_REDIS_URL } from './env';
export { uniqueName } from './names';
export { Teardown, type TeardownStep } from './teardown';
export { waitFor, once, type WaitForOptions } from './wait';
export { blockEventLoop, outcomesAcrossStalls } from './stall';
export { spawnTs, type TsChild, type ChildExit, type LineMatcher } from './child';
export { RedisServers, freePort, redisCli, type RedisNode } from './redis-servers';
export { RabbitCluster, type RabbitNode, type RabbitClusterOptions } from './rabbit-cluster';
export { Rabbit4Node, RABBITMQ_43_DENIALS, amqpAnswers, type Rabbit4NodeOptions } from './rabbit4-node';
