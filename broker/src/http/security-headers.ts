import type { FastifyInstance } from 'fastify';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route serves a page a browser renders (the console): it gets
     * {@link pageContentSecurityPolicy} instead of the API's deny-all policy,
     * and may set its own Cache-Control. A string is the route's own policy.
     */
    page?: boolean | string;
  }
}

/**
 * The policy of API answers: nothing may load, nothing may frame them. A
 * JSON answer opened in a browser then cannot run anything even if a
 * browser mistook it for HTML.
 */
export const apiContentSecurityPolicy = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/**
 * The console page's policy: scripts, styles, images and fonts only from the
 * gateway itself (no inline script, no eval), fetches and event streams only
 * back to it, never framed. Routes opt in with `config: { page: true }`.
 */
export const pageContentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Headers every response carries, whatever the route and whoever answers it. */
const always: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
};

const alwaysNames = Object.keys(always);

/**
 * Security headers on every response: `nosniff`, no framing, no referrer,
 * `Cache-Control: no-store` (API answers are live state and may carry
 * another client's data), and a Content-Security-Policy: deny-all for the
 * API, {@link pageContentSecurityPolicy} for routes marked `page`.
 *
 * Set on the raw response in the first hook, so they also reach answers
 * fastify never sends itself: refusals from later hooks, 404s, and the
 * hijacked MCP streams (Node merges `setHeader` into their `writeHead`).
 * A route's own `reply.header()` still wins (a page's asset may be cached).
 *
 * @example
 * app.get('/', { config: { page: true } }, (_req, reply) => reply.type('text/html').send(html));
 */
export function registerSecurityHeaders(app: FastifyInstance): void {
  // A callback hook, not an async one: it runs on every request, and a promise per hook per request shows in the profile.
  app.addHook('onRequest', (request, reply, done) => {
    const res = reply.raw;
    for (const name of alwaysNames) res.setHeader(name, always[name]!);
    const page = request.routeOptions.config.page;
    res.setHeader('content-security-policy', typeof page === 'string' ? page : page === true ? pageContentSecurityPolicy : apiContentSecurityPolicy);
    if (page === undefined || page === false) res.setHeader('cache-control', 'no-store');
    done();
  });
}
