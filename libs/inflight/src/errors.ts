/**
 * Local errors of @warren/inflight: a string code tests assert on, a `cause`,
 * and whether retrying can help. They are never put on the wire; what a
 * caller of a tracked service sees are Warren's JSON-RPC errors (see the
 * README's error table).
 */
export const InflightErrorCode = {
  /** Redis did not answer (down, unreachable, too slow): the view cannot say anything. */
  Unavailable: 'INFLIGHT_UNAVAILABLE',
  /** Waiting for a call's outcome ran out of time (or was aborted) before it finished. */
  ResultTimeout: 'INFLIGHT_RESULT_TIMEOUT',
  /** The view was closed. */
  Closed: 'INFLIGHT_CLOSED',
} as const;

export type InflightErrorCodeValue = (typeof InflightErrorCode)[keyof typeof InflightErrorCode];

export class InflightError extends Error {
  override readonly name: string = 'InflightError';

  constructor(readonly code: InflightErrorCodeValue, message: string, readonly retryable: boolean, options?: { cause?: unknown }) {
    super(message, options);
  }
}

export class InflightUnavailableError extends InflightError {
  override readonly name = 'InflightUnavailableError';
  constructor(cause?: unknown) {
    super(InflightErrorCode.Unavailable, 'in-flight store unavailable (Redis did not answer)', true, { cause });
  }
}

export class ResultTimeoutError extends InflightError {
  override readonly name = 'ResultTimeoutError';
  constructor(callId: string, options?: { cause?: unknown }) {
    super(InflightErrorCode.ResultTimeout, `no outcome for call ${callId} in time`, true, options);
  }
}

export class InflightClosedError extends InflightError {
  override readonly name = 'InflightClosedError';
  constructor() {
    super(InflightErrorCode.Closed, 'in-flight view closed', false);
  }
}

/**
 * True when Redis answered but refused a script (a bug, or a key of the
 * wrong type): tracking it as an outage would flap. Connection loss,
 * timeouts and server states (LOADING, READONLY, CLUSTERDOWN, ...) are outages.
 */
export function isStoreBug(err: unknown): boolean {
  if (!(err instanceof Error) || err.name !== 'ReplyError') return false;
  return /^(ERR|WRONGTYPE|NOSCRIPT)\b/.test(err.message);
}
