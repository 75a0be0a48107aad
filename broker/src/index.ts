/**
 * @warren/broker — the broker process's parts: the HTTP gateway (JSON-RPC
 * over HTTP, MCP over SSE and Streamable HTTP, operator endpoints) and the
 * rpc.discover service. `main.ts` runs them; other code builds on
 * `startBroker` (everything) or `buildGateway` (bring your own client);
 * `startEmbedded` runs it with services in one process, in memory (embedded mode).
 */
// The package's face (README "Exports"); tests reach the rest through source paths (`../src/...`).
export { startBroker, type Broker, type BrokerOptions } from './broker';
export { buildGateway, type Gateway } from './gateway';
export { resolveGatewayOptions, type GatewayOptions } from './options';
export { brokerOptionsFromEnv } from './env';
export { inflightWiring } from './inflight-wiring';
export type { ProbeResult } from './probes';
export { redisPingProbe } from './redis-probe';
export { startEmbedded, type EmbeddedBroker, type EmbeddedHost, type EmbeddedOptions, type EmbeddedService } from './embedded';
