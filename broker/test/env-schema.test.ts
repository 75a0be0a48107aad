// The environment schema (@warren/config) says each gateway variable's default for the docs;
// resolveGatewayOptions is what applies it. This keeps the two equal.
import { envSchema } from '../../libs/config/src/env-schema';
import { rateLimitDefaults } from '../src/http/rate-limit';
import { consoleDefaults } from '../src/console/options';
import { gatewayDefaults } from '../src/options';

const fields = {
  GATEWAY_HOST: gatewayDefaults.host,
  GATEWAY_PORT: gatewayDefaults.port,
  GATEWAY_BODY_LIMIT_BYTES: gatewayDefaults.bodyLimitBytes,
  GATEWAY_DEFAULT_TIMEOUT_MS: gatewayDefaults.defaultTimeoutMs,
  GATEWAY_MAX_TIMEOUT_MS: gatewayDefaults.maxTimeoutMs,
  GATEWAY_MAX_CONCURRENT_CALLS: gatewayDefaults.maxConcurrentCalls,
  GATEWAY_MAX_SESSIONS: gatewayDefaults.maxSessions,
  GATEWAY_REQUEST_TIMEOUT_MS: gatewayDefaults.requestTimeoutMs,
  GATEWAY_HEADERS_TIMEOUT_MS: gatewayDefaults.headersTimeoutMs,
  GATEWAY_MAX_SESSIONS_PER_TOKEN: gatewayDefaults.maxSessionsPerToken,
  GATEWAY_MAX_SESSIONS_PER_IP: gatewayDefaults.maxSessionsPerIp,
  GATEWAY_SESSION_INIT_TIMEOUT_MS: gatewayDefaults.sessionInitTimeoutMs,
  GATEWAY_MAX_SESSION_OUTPUT_BYTES: gatewayDefaults.maxSessionOutputBytes,
  GATEWAY_RATE_LIMIT_MAX_KEYS: rateLimitDefaults.maxKeys,
  CONSOLE_FEED_BUFFER_BYTES: consoleDefaults.maxBufferedBytes,
} as const;

it.each(Object.entries(fields))('the schema documents %s with the default the gateway applies', (name, value) => {
  expect(envSchema[name as keyof typeof fields].defaultText).toBe(`\`${String(value)}\``);
});
