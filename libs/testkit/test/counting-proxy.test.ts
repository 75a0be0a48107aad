import { createServer, connect, type Server, type Socket } from 'node:net';
import { once } from 'node:events';
import { CountingProxy, Teardown, countsDelta } from '@warren/testkit';
import { AmqpFrameReader, amqpMethodName } from '../src/amqp-frames';
import { RespReader } from '../src/resp-values';

const td = new Teardown();
afterEach(() => td.run());

/** An AMQP frame: type, channel, payload, frame-end. */
function frame(type: number, channel: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(7);
  head.writeUInt8(type, 0);
  head.writeUInt16BE(channel, 1);
  head.writeUInt32BE(payload.length, 3);
  return Buffer.concat([head, payload, Buffer.from([0xce])]);
}

function method(classId: number, methodId: number, rest = Buffer.alloc(4)): Buffer {
  const ids = Buffer.alloc(4);
  ids.writeUInt16BE(classId, 0);
  ids.writeUInt16BE(methodId, 2);
  return frame(1, 1, Buffer.concat([ids, rest]));
}

function tally(): { counts: Record<string, number>; add: (name: string, n?: number) => void } {
  const counts: Record<string, number> = {};
  return { counts, add: (name, n = 1) => void (counts[name] = (counts[name] ?? 0) + n) };
}

describe('AmqpFrameReader', () => {
  it('names methods and kinds of frame, across any split of the bytes, after the protocol header', () => {
    const bytes = Buffer.concat([
      Buffer.from('AMQP\x00\x00\x09\x01', 'latin1'),
      method(60, 40), // basic.publish
      frame(2, 1, Buffer.alloc(14)), // content header
      frame(3, 1, Buffer.from('{"a":1}')), // body
      method(60, 80), // basic.ack
      frame(8, 0, Buffer.alloc(0)), // heartbeat
      method(85, 10), // confirm.select
    ]);
    for (const step of [1, 3, 7, bytes.length]) {
      const { counts, add } = tally();
      const reader = new AmqpFrameReader(add);
      for (let at = 0; at < bytes.length; at += step) reader.push(bytes.subarray(at, at + step));
      expect(counts).toEqual({
        frames: 6, methods: 3, 'basic.publish': 1, 'basic.ack': 1, 'confirm.select': 1,
        'content header frames': 1, 'content body frames': 1, 'heartbeat frames': 1,
      });
    }
  });

  it('counts bytes it cannot read as unparsed instead of throwing', () => {
    const { counts, add } = tally();
    const reader = new AmqpFrameReader(add);
    reader.push(Buffer.concat([method(60, 40).subarray(0, 11), Buffer.from([1, 2, 3, 4, 5, 6])])); // no frame-end where it belongs
    reader.push(Buffer.from('more'));
    expect(counts['unparsed bytes']).toBeGreaterThan(0);
    expect(counts['basic.publish']).toBeUndefined();
  });

  it('names unknown ids by number', () => {
    expect(amqpMethodName(60, 99)).toBe('basic.method-99');
    expect(amqpMethodName(77, 1)).toBe('class-77.method-1');
  });
});

describe('RespReader', () => {
  const read = (wantNames: boolean, text: string, step: number): { values: (string | undefined)[]; unparsed: number } => {
    const values: (string | undefined)[] = [];
    let unparsed = 0;
    const reader = new RespReader(wantNames, (name) => values.push(name), (n) => (unparsed += n));
    const bytes = Buffer.from(text, 'latin1');
    for (let at = 0; at < bytes.length; at += step) reader.push(bytes.subarray(at, at + step));
    return { values, unparsed };
  };

  it('reads pipelined commands by name, across any split', () => {
    const text = '*1\r\n$4\r\nping\r\n*3\r\n$7\r\nEVALSHA\r\n$3\r\nabc\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n';
    for (const step of [1, 2, 5, text.length]) expect(read(true, text, step)).toEqual({ values: ['PING', 'EVALSHA', 'SET'], unparsed: 0 });
  });

  it('reads nested, null and RESP3 replies as one value each', () => {
    const text = '+OK\r\n-ERR x\r\n:5\r\n$-1\r\n*2\r\n*1\r\n:1\r\n$2\r\nab\r\n%1\r\n+k\r\n:1\r\n_\r\n,1.5\r\n#t\r\n*-1\r\n';
    for (const step of [1, 3, text.length]) expect(read(false, text, step).values).toHaveLength(10);
  });

  it('counts what is not RESP as unparsed', () => {
    expect(read(true, '?what\r\n', 100).unparsed).toBe(7);
  });
});

describe('CountingProxy', () => {
  it('forwards bytes untouched and counts RESP commands, replies and round trips of its connections', async () => {
    // A stand-in Redis: answers +OK to every command (one command per line ending a command here).
    const server: Server = createServer((s: Socket) => {
      let pending = '';
      s.on('data', (d: Buffer) => {
        pending += d.toString('latin1');
        const commands = pending.split('*1\r\n$4\r\nPING\r\n');
        pending = commands.pop() ?? '';
        s.write('+PONG\r\n'.repeat(commands.length));
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    td.add(() => new Promise<void>((r) => server.close(() => r())));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    const proxy = await CountingProxy.start({ target: { host: '127.0.0.1', port: address.port }, protocol: 'resp' });
    td.add(() => proxy.close());
    const before = proxy.snapshot();
    const client = connect(proxy.port, '127.0.0.1');
    td.add(() => void client.destroy());
    await once(client, 'connect');
    const received: Buffer[] = [];
    client.on('data', (d: Buffer) => received.push(d));
    // Two pipelined commands (one round trip), then one more after their replies (a second).
    client.write('*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nPING\r\n');
    while (Buffer.concat(received).toString() !== '+PONG\r\n+PONG\r\n') await once(client, 'data');
    client.write('*1\r\n$4\r\nPING\r\n');
    while (Buffer.concat(received).length < 21) await once(client, 'data');
    expect(Buffer.concat(received).toString()).toBe('+PONG\r\n+PONG\r\n+PONG\r\n');
    expect(countsDelta(before, proxy.snapshot())).toEqual({
      connections: 1, commands: 3, PING: 3, replies: 3, 'round trips': 2, 'sent bytes': 42, 'received bytes': 21,
    });
  });
});
