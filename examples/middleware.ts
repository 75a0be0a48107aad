// Middleware on a service (startService's `middleware` option; docs/services.md "Middleware"): one
// that logs every call with its outcome and duration, and one that turns a token carried in the
// params into the caller's identity, which handlers read through `caller()`. Run it like the
// greeter: `npx tsx examples/middleware.ts`, then `npx warren call whoami '{"token":"t-ada"}'`.
import { AsyncLocalStorage } from 'node:async_hooks';
import { Type } from '@sinclair/typebox';
import { defineMethod, startService, type HandlerContext } from '@warren/amqp';
import { UnauthorizedError, type Middleware } from '@warren/jsonrpc';

/** Logs each call once it ends: method, duration and outcome, on the call's logger (callId and trace bound). */
export const logCalls: Middleware<HandlerContext> = async (next, call, ctx) => {
  const started = performance.now();
  try {
    const result = await next(call, ctx);
    ctx.log.info({ method: call.method, ms: Math.round(performance.now() - started) }, 'call done');
    return result;
  } catch (err) {
    ctx.log.warn({ method: call.method, ms: Math.round(performance.now() - started), err }, 'call failed');
    throw err;
  }
};

/** Who is calling, as the auth middleware found out. */
export interface Caller {
  readonly user: string;
  readonly roles: readonly string[];
}

const callers = new AsyncLocalStorage<Caller>();

/** The caller of the call being handled; throws outside a call that went through {@link authContext}. */
export function caller(): Caller {
  const c = callers.getStore();
  if (c === undefined) throw new Error('caller() outside a call that went through authContext');
  return c;
}

/**
 * Takes `token` out of object params, looks it up with `verify` (your token store), answers -32001
 * Unauthorized when it is missing or unknown, and runs the rest of the chain with the caller set:
 * handlers (and their schemas) never see the token.
 */
export function authContext(verify: (token: string) => Caller | undefined): Middleware<HandlerContext> {
  return async (next, call, ctx) => {
    const params = call.params;
    const token = typeof params === 'object' && params !== null && !Array.isArray(params) ? params['token'] : undefined;
    const who = typeof token === 'string' ? verify(token) : undefined;
    if (who === undefined) throw new UnauthorizedError(`${call.method} needs a valid "token" in its params`);
    const { token: _token, ...rest } = params as Record<string, unknown>;
    return callers.run(who, () => next({ ...call, params: rest as typeof params }, ctx));
  };
}

/** `whoami {}` → the caller's user name and roles. */
export const whoami = defineMethod({ params: Type.Object({}, { additionalProperties: false }), result: Type.Object({ user: Type.String(), roles: Type.Array(Type.String()) }) }, () => {
  const { user, roles } = caller();
  return { user, roles: [...roles] };
});

const tokens = new Map<string, Caller>([['t-ada', { user: 'ada', roles: ['admin'] }]]);

if (require.main === module) {
  // The first is the outermost: every call is logged, refused ones too.
  void startService({ urls: process.env.AMQP_URL ?? 'amqp://127.0.0.1', namespace: process.env.WARREN_NAMESPACE || 'warren', name: 'whoami', methods: { whoami }, middleware: [logCalls, authContext((t) => tokens.get(t))] });
}
