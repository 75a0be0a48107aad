/**
 * Reads RESP (Redis's protocol, versions 2 and 3) values out of one direction of a connection, for
 * counting (counting-proxy.ts): where each top-level value ends and, for a command (an array whose
 * first element is a bulk string), its name. Never throws on bad bytes.
 */

const CRLF = 0x0d;

/** One complete top-level value: where it ends, and the first element's text when it is an array of bulk strings. */
interface Value {
  readonly end: number;
  readonly name: string | undefined;
}

const SIMPLE = new Set(['+', '-', ':', '_', ',', '#', '(']);
const BLOB = new Set(['$', '!', '=']);
const AGGREGATE = new Set(['*', '~', '>']);
const PAIRS = new Set(['%', '|']);

function lineEnd(buf: Buffer, from: number): number {
  const at = buf.indexOf(CRLF, from);
  return at < 0 || at + 1 >= buf.length ? -1 : at;
}

/** The value starting at `at`, or `null` while incomplete, or `'bad'` when the bytes are not RESP. */
function readValue(buf: Buffer, at: number, wantName: boolean): Value | null | 'bad' {
  if (at >= buf.length) return null;
  const type = String.fromCharCode(buf[at]!);
  const cr = lineEnd(buf, at + 1);
  if (cr < 0) return null;
  const afterLine = cr + 2;
  if (SIMPLE.has(type)) return { end: afterLine, name: undefined };
  const n = Number(buf.toString('latin1', at + 1, cr));
  if (!Number.isInteger(n)) return 'bad';
  if (BLOB.has(type)) {
    if (n < 0) return { end: afterLine, name: undefined };
    const end = afterLine + n + 2;
    return end > buf.length ? null : { end, name: wantName ? buf.toString('latin1', afterLine, afterLine + n) : undefined };
  }
  if (AGGREGATE.has(type) || PAIRS.has(type)) {
    const items = PAIRS.has(type) ? n * 2 : n;
    let end = afterLine;
    let name: string | undefined;
    for (let i = 0; i < items; i++) {
      const item = readValue(buf, end, wantName && i === 0);
      if (item === null || item === 'bad') return item;
      if (i === 0) name = item.name;
      end = item.end;
    }
    return { end, name: wantName ? name : undefined };
  }
  return 'bad';
}

/** One direction's reader: `onValue(name)` once per complete top-level value (`name`: a command's, upper-cased). */
export class RespReader {
  private pending: Buffer = Buffer.alloc(0);
  private broken = false;

  constructor(
    private readonly wantNames: boolean,
    private readonly onValue: (name: string | undefined) => void,
    private readonly onUnparsed: (bytes: number) => void,
  ) {}

  push(chunk: Buffer): void {
    if (this.broken) return this.onUnparsed(chunk.length);
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    let at = 0;
    for (;;) {
      const value = readValue(this.pending, at, this.wantNames);
      if (value === null) break;
      if (value === 'bad') {
        this.broken = true;
        this.onUnparsed(this.pending.length - at);
        at = this.pending.length;
        break;
      }
      this.onValue(value.name?.toUpperCase());
      at = value.end;
    }
    this.pending = at === 0 ? this.pending : this.pending.subarray(at);
  }
}
