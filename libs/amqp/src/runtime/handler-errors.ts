import { JsonRpcError, encode, encodeResponse, isLocalError, type ResponseMessage } from '@warren/jsonrpc';
import type { Logger } from '@warren/logger';
import type { HandlerContext } from './context';

/**
 * Logs what a request's handler threw, once per run of the call, on the call's own logger (`callId`,
 * `method`, `trace_id`, `span_id`), so the line joins the caller's trace. The rule (docs/services.md,
 * "When a handler throws"):
 *
 * - a `JsonRpcError` is an answer the handler (or its params check, or a nested call it let through)
 *   chose: `debug`, its code and message, no stack;
 * - the call's own abort (deadline, cancel, shutdown) surfacing from the handler: `debug`;
 * - a local error of a nested call (`RPC_TIMEOUT`, `RPC_NO_ROUTE`...) the handler let escape: `warn`
 *   with `err`, as the callee's side is the one that failed;
 * - anything else is a bug the caller sees only as -32603: `error` with `err` (message and stack).
 *
 * Params are never logged (they are the caller's untrusted payload; the logger redacts `params`).
 * Runs only on failure: the success path pays nothing.
 */
export function logHandlerError(thrown: unknown, ctx: HandlerContext): void {
  const log = ctx.log;
  if (thrown instanceof JsonRpcError) {
    if (log.isLevelEnabled('debug')) log.debug({ code: thrown.code, error: thrown.message, attempt: ctx.attempt }, 'handler answered an error');
    return;
  }
  if (abortedBy(thrown, ctx)) {
    if (log.isLevelEnabled('debug')) log.debug({ attempt: ctx.attempt }, 'handler stopped by the call\'s abort');
    return;
  }
  if (isLocalError(thrown)) {
    log.warn({ err: thrown, code: thrown.code, attempt: ctx.attempt }, 'handler failed: a nested call failed');
    return;
  }
  log.error({ err: thrown, attempt: ctx.attempt }, 'handler threw');
}

/** Whether `thrown` is the call's abort coming back out of the handler (its reason, or an AbortError after it fired). */
function abortedBy(thrown: unknown, ctx: HandlerContext): boolean {
  const signal = ctx.signal;
  if (!signal.aborted) return false;
  return thrown === signal.reason || (thrown instanceof Error && thrown.name === 'AbortError');
}

/**
 * The answer's text. A result JSON cannot hold (a BigInt, a cycle) answers -32603
 * `result_not_serializable` (encodeResponse's rule) and is logged as a bug, like a throw: `error` with
 * `err` (what JSON.stringify threw) on the call's logger, a batch member's on its own context (found by
 * its id). The success path is one `encode`, as before: no closure, no child logger.
 */
export function encodeAnswer(response: ResponseMessage | readonly ResponseMessage[], contexts: HandlerContext | readonly HandlerContext[], serviceLog: Logger): string {
  try {
    return encode(response);
  } catch {
    return encodeResponse(response, (r, err) => ((isContextList(contexts) ? contexts.find((c) => c.id === r.id) : contexts)?.log ?? serviceLog).error({ err }, 'handler result is not JSON'));
  }
}

function isContextList(contexts: HandlerContext | readonly HandlerContext[]): contexts is readonly HandlerContext[] {
  return Array.isArray(contexts);
}
