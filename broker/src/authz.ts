/**
 * The gateway's one authorization rule, applied wherever a request enters (POST /rpc, MCP
 * tools/call on SSE and Streamable HTTP, the console's feed and GET /inflight, the CLI through the
 * gateway, which is POST /rpc): it decides from who asks, the method, and the call it targets.
 *
 * - An operator token, or a gateway without auth (nobody to tell apart), may do everything.
 * - A client token sees and cancels only its own calls: `inflight.list`, `history.list` and `delayed.list`
 *   answer its calls only, `inflight.status`, `calls.show`, `inflight.cancel`, `delayed.cancel` and
 *   `$/cancelRequest` reach only a call it made;
 *   `inflight.workers`, every `dlq.*` method, worker controls (`worker.*`, `workers.*`), schedule
 *   changes (`schedule.add|remove|pause|resume|runNow`; `schedule.list` is anyone's) and the
 *   console's feed are an operator's.
 * - Every other method is left to the allow-lists (the gateway's and the token's own).
 *
 * "Own" means made with this token through this gateway (the gate remembers the token of every
 * call it relays: running ones, and the last {@link CallOwners}' capacity of finished ones).
 * Callers on RabbitMQ reach the broker's methods directly: AMQP access is an operator's.
 *
 * @example
 * authorize({ token: 0, operator: false }, 'dlq.list', undefined, () => false);
 * // { kind: 'deny', reason: 'operator_token_required' }
 */

/** Who asks: the access hook's principal, reduced to what the rule reads. */
export interface Asker {
  /** Index of the token in the gateway's `tokens`; undefined without auth. */
  readonly token: number | undefined;
  /** An operator token, or no auth at all. */
  readonly operator: boolean;
}

/** Why a request was refused; `data.reason` of the -32006 answer. */
export type DenyReason = 'operator_token_required' | 'not_your_call' | 'call_id_required';

/** What the rule says about one request. */
export type Verdict =
  | { readonly kind: 'allow' }
  /** Relay it, and keep in the answer only the entries whose `callId` the asker owns (inflight.list, history.list's `items`). */
  | { readonly kind: 'own-calls-only' }
  | { readonly kind: 'deny'; readonly reason: DenyReason; readonly callId?: string };

/** Nobody asking: the gateway's own calls (and tests building a gate by hand). */
export const internalAsker: Asker = { token: undefined, operator: true };

const operatorOnly = /^(dlq|worker|workers)\.|^inflight\.workers$|^schedule\.(add|remove|pause|resume|runNow)$/;
/** Methods that act on one call, named by `callId` (or `id`, as `$/cancelRequest` and the inflight methods read it). */
const oneCall: ReadonlySet<string> = new Set(['inflight.status', 'calls.show', 'inflight.cancel', 'delayed.cancel', '$/cancelRequest']);
/** Methods that answer a list of calls, of which a client token gets its own. */
const callLists: ReadonlySet<string> = new Set(['inflight.list', 'history.list', 'delayed.list']);

/** Whether the method is an operator's whatever the call (documented in docs/gateway.md, "Token scopes"). */
export function isOperatorOnly(method: string): boolean {
  return operatorOnly.test(method);
}

/**
 * The rule. `params` are the request's; `owns(callId)` says whether the asker made that call
 * (asked only for a client token).
 */
export function authorize(asker: Asker, method: string, params: unknown, owns: (callId: string) => boolean): Verdict {
  if (asker.operator) return { kind: 'allow' };
  if (isOperatorOnly(method)) return { kind: 'deny', reason: 'operator_token_required' };
  if (callLists.has(method)) return { kind: 'own-calls-only' };
  if (oneCall.has(method)) {
    const callId = targetCallId(params);
    if (callId === undefined) return { kind: 'deny', reason: 'call_id_required' };
    return owns(callId) ? { kind: 'allow' } : { kind: 'deny', reason: 'not_your_call', callId };
  }
  return { kind: 'allow' };
}

/** Whether tools/list shows the asker a tool of `method`: not when the rule refuses it whatever the call (an operator's method). */
export function mayList(asker: Asker, method: string): boolean {
  return asker.operator || !isOperatorOnly(method);
}

/** The console's live feed shows every call of the cluster: an operator's only. */
export function mayWatchFeed(asker: Asker): boolean {
  return asker.operator;
}

/** Whether GET /inflight shows the asker every call (`scope: "all"`) or its own (`"own"`). */
export function inflightScope(asker: Asker): 'all' | 'own' {
  return asker.operator ? 'all' : 'own';
}

/** The call a one-call method targets, read as the broker's methods read it: `callId`, else `id`. */
function targetCallId(params: unknown): string | undefined {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return undefined;
  const p = params as { callId?: unknown; id?: unknown };
  const id = p.callId ?? p.id;
  return typeof id === 'string' && id !== '' ? id : undefined;
}
