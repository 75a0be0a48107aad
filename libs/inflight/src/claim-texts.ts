// What the tracker writes into a claim (the call's meta) and the answers it gives without running
// a handler (a stored outcome, tracking unavailable): pure text, no store, no state.
import type { RunningCall } from '@warren/calls';
import { ServiceUnavailableError, encodeResponse, failureResponse, idText, type Id } from '@warren/jsonrpc';
import { encodeParams } from './call-params';
import { encodeMeta, outcomeResponse, type ClaimReply } from './record-codec';

/**
 * A stored outcome as the reply text. The stored answer is replied as stored, unparsed: it carries the id of
 * the same request body, as the record's meta says. A call id reused by another publisher (ids are only as
 * unique as it makes them), or an outcome decided without a handler, gets an answer under the request's id.
 */
export function storedText(reply: Extract<ClaimReply, { kind: 'stored' }>, id: Id): string | undefined {
  if (reply.result !== undefined && reply.rid === idText(id)) return reply.result;
  const outcome = outcomeResponse(reply.state, reply.result, reply.code, id);
  return outcome && encodeResponse({ ...outcome, id });
}

/** The answer to a call that must not run untracked (`requireTracking`) while the store is away. */
export function unavailableText(call: RunningCall): string {
  return encodeResponse(failureResponse(call.id, new ServiceUnavailableError(undefined, { reason: 'tracking_unavailable' }).toErrorObject()));
}

/** The call's meta as its claim writes it into the record (record-codec.ts `encodeMeta`). */
export function metaOf(call: RunningCall): string {
  const params = encodeParams(call.params);
  return encodeMeta({ service: call.service, method: call.method, deadline: call.deadline, rid: idText(call.id), ...(call.traceId === undefined ? {} : { traceId: call.traceId }), ...(params === undefined ? {} : { params }) });
}
