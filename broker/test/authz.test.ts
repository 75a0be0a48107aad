// The authorization rule alone (broker/src/authz.ts), method by method and token kind by token
// kind; test/unit/authz-doors.test.ts checks every door applies it.
import { authorize, inflightScope, mayList, mayWatchFeed, type Asker } from '../src/authz';
import { CallOwners } from '../src/call-owners';

const client: Asker = { token: 0, operator: false };
const operator: Asker = { token: 1, operator: true };
const noAuth: Asker = { token: undefined, operator: true };
const owns = (id: string): boolean => id === 'mine';

describe('authorize', () => {
  it.each(['dlq.list', 'dlq.show', 'dlq.replay', 'dlq.purge', 'inflight.workers', 'worker.drain', 'workers.pause'])('keeps %s an operator\'s', (method) => {
    expect(authorize(client, method, { service: 's', id: 'x' }, owns)).toEqual({ kind: 'deny', reason: 'operator_token_required' });
    expect(authorize(operator, method, {}, owns)).toEqual({ kind: 'allow' });
    expect(authorize(noAuth, method, {}, owns)).toEqual({ kind: 'allow' });
    expect(mayList(client, method)).toBe(false);
    expect(mayList(operator, method)).toBe(true);
  });

  it.each(['inflight.list', 'history.list', 'delayed.list'])('gives a client token its own calls from %s', (method) => {
    expect(authorize(client, method, {}, owns)).toEqual({ kind: 'own-calls-only' });
    expect(authorize(operator, method, {}, owns)).toEqual({ kind: 'allow' });
  });

  it.each(['inflight.status', 'calls.show', 'inflight.cancel', 'delayed.cancel', '$/cancelRequest'])('lets a client token reach only its own call with %s', (method) => {
    expect(authorize(client, method, { callId: 'mine' }, owns)).toEqual({ kind: 'allow' });
    expect(authorize(client, method, { id: 'mine' }, owns)).toEqual({ kind: 'allow' });
    expect(authorize(client, method, { callId: 'theirs' }, owns)).toEqual({ kind: 'deny', reason: 'not_your_call', callId: 'theirs' });
    // callId wins over id, as the broker's methods read it: a wrong-typed callId is no way around the rule.
    expect(authorize(client, method, { callId: 5, id: 'mine' }, owns)).toEqual({ kind: 'deny', reason: 'call_id_required' });
    for (const params of [undefined, null, ['mine'], {}, { callId: '' }]) expect(authorize(client, method, params, owns).kind).toBe('deny');
    expect(authorize(operator, method, { callId: 'theirs' }, owns)).toEqual({ kind: 'allow' });
  });

  it('leaves every other method to the allow-lists', () => {
    for (const method of ['add', 'inflight', 'dlq', 'inflightlist', 'rpc.discover']) expect(authorize(client, method, {}, owns)).toEqual({ kind: 'allow' });
  });

  it('gives the feed and the cluster-wide /inflight to operators and to no-auth gateways', () => {
    expect([mayWatchFeed(client), mayWatchFeed(operator), mayWatchFeed(noAuth)]).toEqual([false, true, true]);
    expect([inflightScope(client), inflightScope(operator), inflightScope(noAuth)]).toEqual(['own', 'all', 'all']);
  });
});

describe('CallOwners', () => {
  it('remembers running calls and the most recent finished ones, up to its capacity', () => {
    const owners = new CallOwners(2);
    for (const id of ['a', 'b', 'c']) owners.started(id, 7);
    expect(owners.runningWith('a', 7)).toBe(true);
    for (const id of ['a', 'b', 'c']) owners.finished(id);
    expect(owners.runningWith('a', 7)).toBe(false);
    expect([owners.owner('a'), owners.owner('b'), owners.owner('c')]).toEqual([undefined, 7, 7]);
    owners.finished('never-started');
    expect(owners.owner('never-started')).toBeUndefined();
  });

  it('forgets the oldest finished call each time one more finishes, round after round', () => {
    const owners = new CallOwners(3);
    for (let i = 0; i < 10; i++) {
      owners.started(`c${i}`, i);
      owners.finished(`c${i}`);
    }
    expect(Array.from({ length: 10 }, (_, i) => owners.owner(`c${i}`))).toEqual([undefined, undefined, undefined, undefined, undefined, undefined, undefined, 7, 8, 9]);
  });
});
