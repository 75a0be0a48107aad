// The contract the AMQP engine and runtime speak (driver-free), and its two implementations:
// amqplib's (AmqpConnection, the only code that imports amqplib) and the in-memory broker.
export type {
  ConnectionState, OnOpen, WireConnection, WireModel, WireChannel, WireConfirmChannel, WireMessage, WireGetMessage, WireReturned, WireDelivered,
  WireProperties, WireFields, WireHeaders, WirePublishOptions, WireQueueOptions, WireExchangeOptions, WireConsumeOptions, WireExchangeType, WireQueueInfo,
} from './contract';
export { AmqpConnection, type ConnectionOptions, type TlsOptions } from './connection';
export { type BackoffOptions, type ResolvedBackoff, backoffDelay, defaultBackoff } from './backoff';
export { closeChannel } from './close';
export { MemoryBroker, type MemoryBrokerOptions } from './memory/broker';
export { MemoryConnection, MemoryModel } from './memory/connection';
export { MemoryChannel } from './memory/channel';
export { MemoryChannelError, MemoryConnectionError, MemoryIllegalOperationError, type ChannelErrorCode } from './memory/errors';
