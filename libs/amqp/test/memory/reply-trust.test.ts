import { RpcTimeoutError } from '@warren/jsonrpc';
import { type Progress } from '@warren/amqp';
import { replyUsersOf } from '../../src/engine/reply-users';
import { World, useWorld, rejection, until } from './world';

let w: World;
useWorld((made) => (w = made));

// The in-memory broker carries user_id as given (it has no logins to check it against); RabbitMQ's
// check that a publisher cannot claim another user is in test/integration/least-privilege.int.test.ts.
describe('replies checked against the RabbitMQ user of the called service (ClientOptions.replyUsers)', () => {
  const progressing = { handler: (_p: unknown, ctx: { progress(f: number, m?: string): void }) => {
    ctx.progress(0.5, 'half');
    return 'done';
  } };

  it('takes a reply and progress stamped by the expected user', async () => {
    await w.service({ name: 'calc', userId: 'calc-user', methods: { 'calc.run': progressing } });
    const client = await w.client({ replyUsers: replyUsersOf({ calc: { user: 'calc-user', methods: ['calc.run'] } }) });
    const seen: Progress[] = [];
    expect(await until(client.call('calc.run', [], { onProgress: (p) => seen.push(p) }))).toBe('done');
    expect(seen.map((p) => p.message)).toEqual(['half']);
    expect(client.stats().untrustedReplies).toBe(0);
  });

  it('drops, counts and never delivers a reply or progress from another user (or none): the call times out', async () => {
    await w.service({ name: 'calc', userId: 'someone-else', methods: { 'calc.run': progressing } });
    await w.service({ name: 'plain', methods: { 'plain.run': progressing } });
    const client = await w.client({ replyUsers: replyUsersOf({ calc: { user: 'calc-user', methods: ['calc.run', 'plain.run'] } }) });
    const seen: Progress[] = [];
    expect(await rejection(until(client.call('calc.run', [], { onProgress: (p) => seen.push(p), timeoutMs: 1000 })))).toBeInstanceOf(RpcTimeoutError);
    expect(await rejection(until(client.call('plain.run', [], { timeoutMs: 1000 })))).toBeInstanceOf(RpcTimeoutError);
    expect(seen).toEqual([]);
    expect(client.stats().untrustedReplies).toBe(2 + 1);
  });

  it('leaves methods the table does not name unchecked, and changes nothing without replyUsers', async () => {
    await w.service({ name: 'calc', userId: 'someone-else', methods: { 'calc.run': progressing } });
    const checked = await w.client({ replyUsers: replyUsersOf({ other: { user: 'u', methods: ['other.run'] } }) });
    const plain = await w.client();
    expect(await until(checked.call('calc.run', []))).toBe('done');
    expect(await until(plain.call('calc.run', []))).toBe('done');
  });
});
