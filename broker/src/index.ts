/**
 * @warren/broker — the broker process's parts: the HTTP gateway (JSON-RPC
 * over HTTP, MCP over SSE and Streamable HTTP, operator endpoints) and the
 * rpc.discover service. `main.ts` runs them; other code builds on
 * `startBroker` (everything) or `buildGateway` (bring your own client);
 * `startEmbedded` runs it with services in one process, in memory (embedded mode).
 */
export { startBroker, type Broker, type BrokerOptions } from './broker';
export { buildGateway, jsonContentTypes, type Gateway, type GatewayDeps } from './gateway';
export { resolveGatewayOptions, methodFilter, gatewayDefaults, type GatewayOptions, type ResolvedGatewayOptions } from './options';
export { brokerOptionsFromEnv, brokerEnv, type BrokerEnv } from './env';
export { inflightWiring } from './inflight-wiring';
export { startEmbedded, type EmbeddedBroker, type EmbeddedHost, type EmbeddedOptions, type EmbeddedService } from './embedded';
export type { InflightSource, ClusterCall } from './inflight';
export { runProbes, type ReadinessProbe, type ProbeResult, type ProbeReport } from './probes';
export { redisPingProbe } from './redis-probe';
export { buildCatalogue, objectSchema, type Catalogue, type CatalogueMethod, type CatalogueTool, type ServiceSummary } from './catalogue';
export { LiveCatalogue } from './live-catalogue';
export { openRpcDocument, contentDescriptors, openRpcVersion, type OpenRpcInfo, type OpenRpcServer } from './openrpc';
export { discoveryProbe } from './discovery-probe';
export { servicesView, type ServiceView } from './services-view';
export { toolResult, type ToolCallResult } from './mcp/tool-result';
export { CallGate, type GatewayCall } from './gateway-calls';
export { BrokerMetrics, outcomeLabel, type Via } from './metrics';
export { GatewayRefusal, refusal, type GatewayRefusalCode } from './http/errors';
export { TokenBuckets, RequestLimiter, resolveRateLimit, rateLimitDefaults, type RateLimitOptions, type BucketSpec, type Take, type RateLimitScope } from './http/rate-limit';
