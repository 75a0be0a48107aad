import { RpcNoRouteError, type LocalError, type PendingCalls, type ResponseMessage } from '@warren/jsonrpc';

/**
 * What a request RabbitMQ returned (mandatory, 312 NO_ROUTE) fails with, when something knows better than
 * RpcNoRouteError (-32601): RabbitMQ returns a request alike when no queue is bound for its method and when the
 * bound queue cannot take it (a classic queue whose home node is down), so only someone who knows which
 * service serves the method can tell the two apart. Undefined (or a promise of it): -32601 stands.
 */
export type ReturnExplainer = (method: string) => LocalError | undefined | Promise<LocalError | undefined>;

/**
 * Fails a returned call: with the explainer's error, else RpcNoRouteError naming `namespace`. Runs only for a returned publish,
 * never on a call's way out or back; an explainer that answers later leaves the call pending until it does
 * (a call that settled meanwhile, by its deadline or an abort, is left as it is); `explaining` holds its id until then.
 */
export function failReturned(pending: PendingCalls<string, ResponseMessage>, callId: string, method: string, explain: ReturnExplainer | undefined, namespace: string, explaining: Set<string>): void {
  // Held while an explainer answers later: the confirm RabbitMQ sends after the return must not settle a job meanwhile (enqueue.ts).
  explaining.add(callId);
  const fail = (err: LocalError | undefined): void => {
    explaining.delete(callId);
    pending.reject(callId, err ?? new RpcNoRouteError(method, { namespace }));
  };
  const explained = explain?.(method);
  if (explained instanceof Promise) void explained.then(fail, () => fail(undefined));
  else fail(explained);
}
