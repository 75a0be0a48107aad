import { ErrorCode, RpcNoRouteError, wireErrorOf } from '@warren/jsonrpc';
import { ServiceRegistry, guardAvailability, nearMethods } from '@warren/amqp';
import { World, useWorld, rejection, until } from './world';

let w: World;
useWorld((made) => (w = made));

describe('-32601 names the namespace and suggests near methods', () => {
  it('nearMethods: within 2 edits (1 for short names), the same last segment under another prefix, nearest first, at most 3', () => {
    const known = ['add', 'subtract', 'multiply', 'math.divide', 'billing.charge', 'billing.refund', 'sum'];
    expect(nearMethods('sbutract', known)).toEqual(['subtract']);
    expect(nearMethods('ad', known)).toEqual(['add']);
    expect(nearMethods('divide', known)).toEqual(['math.divide']);
    expect(nearMethods('bill.charge', known)).toEqual(['billing.charge']);
    expect(nearMethods('sub', known)).toEqual(['sum']);
    expect(nearMethods('zzzzzz', known)).toEqual([]);
    expect(nearMethods('abcd', ['abce', 'abde', 'abc', 'x.abcd', 'abxy'])).toEqual(['abc', 'abce', 'abde']);
  });

  it('a plain client (connectClient\'s explainer hears the announcements) says the namespace it looked in, and nothing is near there', async () => {
    const client = await w.client({ namespace: 'teamx' });
    const err = await until(rejection(client.call('no.such', [], { timeoutMs: 60_000 })));
    expect(err).toMatchObject({ constructor: RpcNoRouteError, method: 'no.such', namespace: 'teamx', suggestions: [] });
    expect(wireErrorOf(err)?.toErrorObject()).toEqual({
      code: ErrorCode.MethodNotFound,
      message: 'Method not found: "no.such" is served by nobody in namespace "teamx"',
      data: { reason: 'no_route', method: 'no.such', namespace: 'teamx', suggestions: [] },
    });
  });

  it('with guardAvailability, a misspelt method gets the announced methods near it; a wrong namespace gets none', async () => {
    await w.service({ name: 'calc', methods: { 'calc.add': { handler: () => 1 }, 'calc.subtract': { handler: () => 2 } } });
    const connection = w.bus.connect();
    const registry = await ServiceRegistry.start(connection);
    await until(registry.discovered(), 50);
    const client = await w.client();
    const guard = guardAvailability(client, connection, registry, { ttlMs: 0 });
    const typo = await until(rejection(client.call('calc.ad', [], { timeoutMs: 60_000 })));
    expect(wireErrorOf(typo)?.toErrorObject()).toEqual({
      code: ErrorCode.MethodNotFound,
      message: 'Method not found: "calc.ad" is served by nobody in namespace "warren"; did you mean "calc.add"?',
      data: { reason: 'no_route', method: 'calc.ad', namespace: 'warren', suggestions: ['calc.add'] },
    });
    const short = await until(rejection(client.call('subtract', [], { timeoutMs: 60_000 })));
    expect(short).toMatchObject({ constructor: RpcNoRouteError, suggestions: ['calc.subtract'] });
    const far = await until(rejection(client.call('nothing.near', [], { timeoutMs: 60_000 })));
    expect(far).toMatchObject({ constructor: RpcNoRouteError, namespace: 'warren', suggestions: [] });
    guard.close();
    await until(registry.close());
    await until(connection.close());
  });
});
