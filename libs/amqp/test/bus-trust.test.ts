import { readFileSync } from 'node:fs';
import path from 'node:path';
import { asUser, names, permissionsFor, setPermissionsLine } from '@warren/amqp';
import { replyUsersOf } from '../src/engine/reply-users';
import { resolveClientOptions } from '../src/engine/client-options';
import { setPermissionsArgs } from '../src/wire/permissions';
import { CallIds } from '../src/engine/call-ids';

describe('call ids', () => {
  it('are <clientId>.<22 base64url characters>, all different, with nothing to predict from the last', () => {
    const ids = new CallIds('k3J9');
    const many = Array.from({ length: 5000 }, () => ids.next());
    for (const id of many.slice(0, 50)) expect(id).toMatch(/^k3J9\.[A-Za-z0-9_-]{22}$/);
    expect(new Set(many).size).toBe(many.length);
    // No two consecutive ids share their random tail's first 8 characters: not a counter.
    expect(many.slice(1).filter((id, i) => id.slice(5, 13) === many[i]?.slice(5, 13))).toEqual([]);
  });

  it('peek shows the id next takes; fresh ids (notifications) leave it reserved', () => {
    const ids = new CallIds('c');
    const shown = ids.peek();
    expect(ids.peek()).toBe(shown);
    expect(ids.fresh()).not.toBe(shown);
    expect(ids.next()).toBe(shown);
    expect(ids.next()).not.toBe(shown);
  });
});

describe('clientIdPrefix and asUser', () => {
  it('begins the default client id with `<prefix>-` and 12 random characters', () => {
    expect(resolveClientOptions({ clientIdPrefix: 'web' }).clientId).toMatch(/^web-[A-Za-z0-9_-]{12}$/);
    expect(resolveClientOptions({ clientIdPrefix: 'web', clientId: 'mine' }).clientId).toBe('mine');
    expect(() => resolveClientOptions({ clientIdPrefix: 'a.b' })).toThrow(/clientIdPrefix/);
    expect(() => resolveClientOptions({ clientIdPrefix: '-x' })).toThrow(/clientIdPrefix/);
  });

  it('asUser stamps replies and prefixes the nested client, keeping its other options', () => {
    expect(asUser({ name: 's', client: { persistent: true } }, 'svc-s')).toEqual({ name: 's', userId: 'svc-s', client: { persistent: true, clientIdPrefix: 'svc-s' } });
    expect(asUser({ name: 's' }, undefined)).toEqual({ name: 's' });
  });
});

describe('replyUsersOf', () => {
  it('maps each method to its service user and refuses a method under two users', () => {
    const users = replyUsersOf({ calculator: { user: 'calc', methods: ['add', 'sum'] }, audit: { user: 'audit', methods: ['audit.recent'] } });
    expect(users('add')).toBe('calc');
    expect(users('audit.recent')).toBe('audit');
    expect(users('other')).toBeUndefined();
    expect(() => replyUsersOf({ a: { user: 'a', methods: ['m'] }, b: { user: 'b', methods: ['m'] } })).toThrow(/two users/);
  });
});

describe('permissionsFor', () => {
  const n = names('warren');
  const re = (pattern: string): RegExp => new RegExp(pattern);
  const caller = permissionsFor(n, { clientIdPrefix: 'web' });
  const calculator = permissionsFor(n, { clientIdPrefix: 'calculator', service: 'calculator' });

  it('lets a caller publish requests, notifications and cancels, and read only its own reply queues', () => {
    for (const ex of [n.requestExchange, n.eventExchange, n.cancelExchange]) expect(ex).toMatch(re(caller.write));
    expect('amq.default').not.toMatch(re(caller.write));
    expect(n.replyQueue('web-AbCdEfGhIj_-')).toMatch(re(caller.read));
    expect(n.replyQueue('web-AbCdEfGhIj_-')).toMatch(re(caller.configure));
    for (const q of [n.replyQueue('webx-AbCdEfGhIj_-'), n.replyQueue('web-x-AbCdEfGhIj_-'), n.replyQueue('other-AbCdEfGhIj_-'), n.serviceQueue('calculator'), n.replyQueue('web-AbCdEfGhIj_-x')]) {
      expect(q).not.toMatch(re(caller.read));
    }
  });

  it('lets a service declare, bind and consume only its own queues, and publish replies', () => {
    const own = [n.serviceQueue('calculator'), n.deadLetterQueue('calculator'), n.retryQueue('calculator', 1000), n.serviceEventQueue('calculator'), n.instanceEventQueue('calculator', 'i-1'), n.instanceControlQueue('calculator', 'i-1'), n.cancelQueue('calculator', 'i-1')];
    for (const q of own) for (const p of [calculator.configure, calculator.write, calculator.read]) expect(q).toMatch(re(p));
    const others = [n.serviceQueue('audit'), n.deadLetterQueue('audit'), n.serviceEventQueue('audit'), n.serviceQueue('calculator2'), n.replyQueue('web-AbCdEfGhIj_-')];
    for (const q of others) for (const p of [calculator.configure, calculator.write, calculator.read]) expect(q).not.toMatch(re(p));
    expect('amq.default').toMatch(re(calculator.write));
    expect(n.replyQueue('calculator-AbCdEfGhIj_-')).toMatch(re(calculator.read));
  });

  it('gives the dead-letter role every dead-letter queue and nothing else to read', () => {
    const broker = permissionsFor(n, { clientIdPrefix: 'broker', deadLetters: true, discovery: true });
    expect(n.deadLetterQueue('audit')).toMatch(re(broker.read));
    expect(n.serviceQueue('audit')).not.toMatch(re(broker.read));
    expect('amq.gen-abc').toMatch(re(broker.read));
  });

  it('writes rabbitmqctl arguments and a quoted shell line', () => {
    expect(setPermissionsArgs('/', 'web', caller)).toEqual(['set_permissions', '-p', '/', 'web', caller.configure, caller.write, caller.read]);
    expect(setPermissionsLine('/', 'web', { configure: "a'b", write: '^$', read: '.*' })).toBe(`rabbitmqctl set_permissions -p / web 'a'\\''b' '^$' '.*'`);
  });
});

describe('docs/security.md', () => {
  it('shows the line permissionsFor and setPermissionsLine make for a plain caller', () => {
    const doc = readFileSync(path.resolve(__dirname, '..', '..', '..', 'docs', 'security.md'), 'utf8');
    expect(doc).toContain(setPermissionsLine('/', 'web', permissionsFor(names('warren'), { clientIdPrefix: 'web' })));
  });
});
