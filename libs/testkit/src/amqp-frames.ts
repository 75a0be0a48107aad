/**
 * Reads AMQP 0-9-1 frames out of one direction of a connection, for counting (counting-proxy.ts):
 * the frame type, and for a method frame its class and method, named as the spec names them
 * (`basic.publish`, `confirm.select`). Never throws on bad bytes: what it cannot read it counts as
 * `unparsed bytes` and stops reading that direction.
 */

const METHODS: Readonly<Record<number, readonly [string, Readonly<Record<number, string>>]>> = {
  10: ['connection', { 10: 'start', 11: 'start-ok', 20: 'secure', 21: 'secure-ok', 30: 'tune', 31: 'tune-ok', 40: 'open', 41: 'open-ok', 50: 'close', 51: 'close-ok', 60: 'blocked', 61: 'unblocked', 70: 'update-secret', 71: 'update-secret-ok' }],
  20: ['channel', { 10: 'open', 11: 'open-ok', 20: 'flow', 21: 'flow-ok', 40: 'close', 41: 'close-ok' }],
  40: ['exchange', { 10: 'declare', 11: 'declare-ok', 20: 'delete', 21: 'delete-ok', 30: 'bind', 31: 'bind-ok', 40: 'unbind', 51: 'unbind-ok' }],
  50: ['queue', { 10: 'declare', 11: 'declare-ok', 20: 'bind', 21: 'bind-ok', 30: 'purge', 31: 'purge-ok', 40: 'delete', 41: 'delete-ok', 50: 'unbind', 51: 'unbind-ok' }],
  60: ['basic', { 10: 'qos', 11: 'qos-ok', 20: 'consume', 21: 'consume-ok', 30: 'cancel', 31: 'cancel-ok', 40: 'publish', 50: 'return', 60: 'deliver', 70: 'get', 71: 'get-ok', 72: 'get-empty', 80: 'ack', 90: 'reject', 100: 'recover-async', 110: 'recover', 111: 'recover-ok', 120: 'nack' }],
  85: ['confirm', { 10: 'select', 11: 'select-ok' }],
  90: ['tx', { 10: 'select', 11: 'select-ok', 20: 'commit', 21: 'commit-ok', 30: 'rollback', 31: 'rollback-ok' }],
};

/** `basic.publish`, or `class-60.method-99` for ids the spec does not name. */
export function amqpMethodName(classId: number, methodId: number): string {
  const known = METHODS[classId];
  if (known === undefined) return `class-${classId}.method-${methodId}`;
  return `${known[0]}.${known[1][methodId] ?? `method-${methodId}`}`;
}

const FRAME_KINDS: Readonly<Record<number, string>> = { 1: 'method', 2: 'content header', 3: 'content body', 8: 'heartbeat' };
const FRAME_END = 0xce;
const HEADER = 7;
const PROTOCOL_HEADER = Buffer.from('AMQP', 'latin1');

/** One direction's reader: feed it the bytes as they pass, it calls `count(name)` once per frame or method. */
export class AmqpFrameReader {
  private pending: Buffer = Buffer.alloc(0);
  private started = false;
  private broken = false;

  constructor(private readonly count: (name: string, n?: number) => void) {}

  push(chunk: Buffer): void {
    if (this.broken) {
      this.count('unparsed bytes', chunk.length);
      return;
    }
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    let at = 0;
    if (!this.started) {
      if (this.pending.length < 8) return;
      // The client's first 8 bytes are the protocol header ("AMQP" 0 0 9 1), not a frame.
      if (this.pending.subarray(0, 4).equals(PROTOCOL_HEADER)) at = 8;
      this.started = true;
    }
    while (this.pending.length - at >= HEADER) {
      const type = this.pending.readUInt8(at);
      const size = this.pending.readUInt32BE(at + 3);
      const end = at + HEADER + size;
      if (this.pending.length < end + 1) break;
      if (this.pending.readUInt8(end) !== FRAME_END) {
        this.broken = true;
        this.count('unparsed bytes', this.pending.length - at);
        at = this.pending.length;
        break;
      }
      this.count('frames');
      const kind = FRAME_KINDS[type] ?? `type-${type}`;
      if (type === 1 && size >= 4) {
        this.count('methods');
        this.count(amqpMethodName(this.pending.readUInt16BE(at + HEADER), this.pending.readUInt16BE(at + HEADER + 2)));
      } else {
        this.count(`${kind} frames`);
      }
      at = end + 1;
    }
    this.pending = at === 0 ? this.pending : this.pending.subarray(at);
  }
}
