import { ErrorCode, wireErrorOf } from '@warren/jsonrpc';
import type { ExitCodeValue } from '../errors';
import type { Session } from '../session';
import { reportError } from './call';

/**
 * Calls one of the broker's own methods (dlq.*, workers.*) over RabbitMQ, or through the gateway
 * with `--via gateway`; an error is reported and answered as its exit code. A missing broker
 * (-32601) prints `missingHint` too.
 */
export async function callBroker<R>(s: Session, method: string, params: Record<string, unknown>, missingHint: string): Promise<R | ExitCodeValue> {
  const client = await s.client();
  try {
    return await client.call<R>(method, JSON.parse(JSON.stringify(params)) as Record<string, never>);
  } catch (err) {
    const wire = wireErrorOf(err);
    if (!wire) throw err;
    // Locally RpcNoRouteError (nothing bound for the method), through a gateway its -32601: the same hint.
    if (wire.code === ErrorCode.MethodNotFound) s.err(s.c.dim(missingHint));
    return reportError(s, err);
  }
}

/** Whether {@link callBroker} answered an exit code (it failed) rather than a result. */
export const failed = (v: unknown): v is ExitCodeValue => typeof v === 'number';
