import { STATUS_CODES } from 'node:http';
import type { FastifyReply } from 'fastify';
import { ErrorCode, errorResponse, type ErrorResponse, type JsonValue } from '@warren/jsonrpc';

/**
 * The gateway's HTTP-level refusals: a request turned away before any
 * JSON-RPC message in it was looked at. Each answers its HTTP status with a
 * JSON-RPC error body (id null), so JSON-RPC clients read it like any other
 * error. docs/gateway.md has this table in prose; keep them in step.
 */
export const GatewayRefusal = {
  /** Body over `bodyLimitBytes`. */
  WARREN_GW_BODY_TOO_LARGE: { status: 413, code: ErrorCode.InvalidRequest, reason: 'too_large' },
  /** Content-Type is not JSON (application/json, application/json-rpc, application/jsonrequest). */
  WARREN_GW_UNSUPPORTED_MEDIA_TYPE: { status: 415, code: ErrorCode.InvalidRequest, reason: 'unsupported_media_type' },
  /** No bearer token, or one the gateway does not accept. */
  WARREN_GW_UNAUTHORIZED: { status: 401, code: ErrorCode.Unauthorized, reason: 'missing_or_invalid_token' },
  /** A valid token that is not an operator's, where only an operator may go (the console's feed: authz.ts). */
  WARREN_GW_OPERATOR_REQUIRED: { status: 403, code: ErrorCode.Unauthorized, reason: 'operator_token_required' },
  /** `Host` names a host the gateway does not serve (DNS rebinding protection; `allowedHosts`). */
  WARREN_GW_FORBIDDEN_HOST: { status: 403, code: ErrorCode.Unauthorized, reason: 'host_not_allowed' },
  /** `Origin` is neither the gateway's own nor in `allowedOrigins` (a foreign web page). */
  WARREN_GW_FORBIDDEN_ORIGIN: { status: 403, code: ErrorCode.Unauthorized, reason: 'origin_not_allowed' },
  /** `X-Timeout-Ms` is not a positive integer. */
  WARREN_GW_BAD_TIMEOUT: { status: 400, code: ErrorCode.InvalidRequest, reason: 'invalid_timeout_header' },
  /** `X-Delay-Ms` or `X-Not-Before` malformed, both given, or further than 2^32 − 1 ms away. */
  WARREN_GW_BAD_DELAY: { status: 400, code: ErrorCode.InvalidRequest, reason: 'invalid_delay_header' },
  /** A malformed HTTP request fastify refused (bad Content-Length, aborted upload). */
  WARREN_GW_BAD_REQUEST: { status: 400, code: ErrorCode.InvalidRequest, reason: 'bad_http_request' },
  /** Headers or body not received within `headersTimeoutMs` / `requestTimeoutMs`; the connection is closed. */
  WARREN_GW_REQUEST_TIMEOUT: { status: 408, code: ErrorCode.InvalidRequest, reason: 'request_timeout' },
  /** The client IP's or the bearer token's rate limit is used up (`data.scope`: `ip` or `token`; `data.retryAfterMs`); answered with `Retry-After`. */
  WARREN_GW_RATE_LIMITED: { status: 429, code: ErrorCode.Overloaded, reason: 'rate_limited' },
  /** An MCP post without a session id. */
  WARREN_GW_SESSION_REQUIRED: { status: 400, code: ErrorCode.InvalidRequest, reason: 'session_id_required' },
  /** An MCP post naming a session that does not exist (never did, or its stream closed). */
  WARREN_GW_SESSION_NOT_FOUND: { status: 404, code: ErrorCode.InvalidRequest, reason: 'session_not_found' },
  /** The token's or the client address's MCP session quota is used up (`data.scope`: `token` or `ip`; `data.limit`). */
  WARREN_GW_SESSION_QUOTA: { status: 429, code: ErrorCode.Overloaded, reason: 'session_quota' },
  /** `maxSessions` MCP sessions are open already. */
  WARREN_GW_TOO_MANY_SESSIONS: { status: 503, code: ErrorCode.Overloaded, reason: 'too_many_sessions' },
  /** The gateway is shutting down. */
  WARREN_GW_SHUTTING_DOWN: { status: 503, code: ErrorCode.ShuttingDown, reason: 'shutting_down' },
  /** Anything unexpected; details go to the log, never to the caller. */
  WARREN_GW_INTERNAL: { status: 500, code: ErrorCode.InternalError, reason: 'internal' },
} as const satisfies Record<string, { status: number; code: number; reason: string }>;

export type GatewayRefusalCode = keyof typeof GatewayRefusal;

/** The status and body a refusal answers with. */
export function refusal(code: GatewayRefusalCode, extra: Record<string, JsonValue> = {}): { status: number; body: ErrorResponse } {
  const entry = GatewayRefusal[code];
  return { status: entry.status, body: errorResponse(null, entry.code, { reason: entry.reason, ...extra }) };
}

/** Where sendRefusal marks a reply, so the gateway's onResponse hook counts refusals by reason (metrics). */
export const refusedWith: unique symbol = Symbol('warren.refusal');

/** A reply sendRefusal answered: it carries the refusal's code. */
export type RefusedReply = FastifyReply & { [refusedWith]?: GatewayRefusalCode };

/** Answers `reply` with the refusal `code` (its status and JSON-RPC error body). */
export function sendRefusal(reply: FastifyReply, code: GatewayRefusalCode, extra: Record<string, JsonValue> = {}): FastifyReply {
  const { status, body } = refusal(code, extra);
  (reply as RefusedReply)[refusedWith] = code;
  return reply.code(status).send(body);
}

/**
 * A refusal as raw HTTP/1.1 bytes that close the connection, for requests
 * Node's parser rejects before fastify has a request to reply on (a bad
 * header byte, a bad Content-Length, headers over the size limit).
 */
export function rawRefusal(code: GatewayRefusalCode, status: number): string {
  const text = JSON.stringify(refusal(code).body);
  return `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${text}`;
}

/** Maps fastify's own errors (body limit, content type) onto the catalogue. */
export function refusalForFastifyError(error: { code?: string; statusCode?: number }): GatewayRefusalCode {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return 'WARREN_GW_BODY_TOO_LARGE';
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return 'WARREN_GW_UNSUPPORTED_MEDIA_TYPE';
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return 'WARREN_GW_BAD_REQUEST';
    default:
      if (error.statusCode === 413) return 'WARREN_GW_BODY_TOO_LARGE';
      if (error.statusCode === 415) return 'WARREN_GW_UNSUPPORTED_MEDIA_TYPE';
      if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) return 'WARREN_GW_BAD_REQUEST';
      return 'WARREN_GW_INTERNAL';
  }
}
