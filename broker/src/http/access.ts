import type { FastifyInstance, FastifyReply } from 'fastify';
import { methodFilter, type ResolvedToken } from '../options';
import { bearerMatcher } from './auth';
import { sendRefusal } from './errors';
import { RequestLimiter, type RateLimitScope, type ResolvedRateLimit, type Take } from './rate-limit';

/**
 * Who a request speaks for, once the bearer token is checked: which
 * configured token (its index, never the token itself), whether it may see
 * every client's calls, and which methods it may call.
 */
export interface Principal {
  /** Index of the token in `tokens`; undefined without auth (and on public routes). */
  readonly token: number | undefined;
  /** Sees every call in /inflight. True without auth: there is nobody to tell apart. */
  readonly operator: boolean;
  /** The gateway's allow-list and the token's own, together. */
  readonly allow: (method: string) => boolean;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Served without a bearer token even when auth is on (probes, metrics). */
    public?: boolean;
  }
  interface FastifyRequest {
    /** Set by the access hook before any handler runs. */
    principal: Principal;
  }
}

export interface AccessOptions {
  readonly tokens: readonly ResolvedToken[];
  readonly rateLimit: ResolvedRateLimit | undefined;
  /** The gateway's own allow-list. */
  readonly allow: (method: string) => boolean;
}

/**
 * The access hook: the client IP's rate limit (so token guessing is
 * throttled too), the bearer token, the token's rate limit, in that order;
 * then `request.principal` says who the request speaks for.
 */
export function registerAccess(app: FastifyInstance, o: AccessOptions): void {
  const anonymous: Principal = { token: undefined, operator: o.tokens.length === 0, allow: o.allow };
  const principals: Principal[] = o.tokens.map((t, i) => {
    const own = t.allowMethods === undefined ? undefined : methodFilter(t.allowMethods);
    return { token: i, operator: t.operator, allow: own ? (m) => o.allow(m) && own(m) : o.allow };
  });
  // Reference-type decorators are shared between requests; each request gets its value in the hook.
  app.decorateRequest('principal', null as unknown as Principal);
  const tokenIndex = o.tokens.length > 0 ? bearerMatcher(o.tokens.map((t) => t.token)) : undefined;
  const limiter = o.rateLimit ? new RequestLimiter(o.rateLimit) : undefined;
  const limited = (reply: FastifyReply, scope: RateLimitScope, take: Take): boolean => {
    if (take.ok) return false;
    reply.log.debug({ scope, ip: reply.request.ip, retryAfterMs: take.retryAfterMs }, 'request rate-limited');
    void sendRefusal(reply.header('retry-after', String(Math.ceil(take.retryAfterMs / 1000))), 'WARREN_GW_RATE_LIMITED', { scope, retryAfterMs: take.retryAfterMs });
    return true;
  };
  // A callback hook (no promise per request); a refusal sends and never calls `done`.
  app.addHook('onRequest', (request, reply, done) => {
    request.principal = anonymous;
    if (request.routeOptions.config.public === true) return done();
    if (limiter && limited(reply, 'ip', limiter.ip(request.ip))) return;
    if (!tokenIndex) return done();
    const index = tokenIndex(request.headers.authorization);
    const principal = index === undefined ? undefined : principals[index];
    if (index === undefined || !principal) {
      void sendRefusal(reply.header('www-authenticate', 'Bearer realm="warren"'), 'WARREN_GW_UNAUTHORIZED');
      return;
    }
    if (limiter && limited(reply, 'token', limiter.token(index))) return;
    request.principal = principal;
    done();
  });
}

