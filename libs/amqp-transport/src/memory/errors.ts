/** The reply codes RabbitMQ closes a channel with, for the cases Warren meets. */
export type ChannelErrorCode = 404 | 405 | 406 | 540;

const codeNames: Record<ChannelErrorCode, string> = { 404: 'NOT_FOUND', 405: 'RESOURCE_LOCKED', 406: 'PRECONDITION_FAILED', 540: 'NOT_IMPLEMENTED' };

/**
 * A channel closed by the broker, worded as amqplib words it
 * (`Channel closed by server: 404 (NOT-FOUND) with message "NOT_FOUND - no queue 'q' in vhost '/'"`),
 * so code matching amqplib's messages or its `code` reads it the same.
 */
export class MemoryChannelError extends Error {
  override readonly name = 'MemoryChannelError';
  constructor(
    readonly code: ChannelErrorCode,
    readonly replyText: string,
  ) {
    super(`Channel closed by server: ${code} (${codeNames[code].replace('_', '-')}) with message "${codeNames[code]} - ${replyText}"`);
  }
}

export const notFound = (what: 'queue' | 'exchange', name: string): MemoryChannelError => new MemoryChannelError(404, `no ${what} '${name}' in vhost '/'`);

export const preconditionFailed = (text: string): MemoryChannelError => new MemoryChannelError(406, text);

export const resourceLocked = (queue: string): MemoryChannelError =>
  new MemoryChannelError(405, `cannot obtain exclusive access to locked queue '${queue}' in vhost '/'. It could be originally declared on another connection or the exclusive property value does not match that of the original declaration.`);

/** Using a channel (or connection) that is closed; amqplib throws its IllegalOperationError at once, so does this. */
export class MemoryIllegalOperationError extends Error {
  override readonly name = 'IllegalOperationError';
}

/**
 * A connection closed by the broker (a hard error, AMQP code 541 INTERNAL_ERROR for a denied deprecated
 * feature), worded as amqplib words it (`Connection closed: 541 (INTERNAL-ERROR) with message "..."`).
 * Every channel of the connection closes with it, and its exclusive queues go.
 */
export class MemoryConnectionError extends Error {
  override readonly name = 'MemoryConnectionError';
  constructor(
    readonly code: 541,
    readonly replyText: string,
  ) {
    super(`Connection closed: ${code} (INTERNAL-ERROR) with message "${replyText}"`);
  }
}
