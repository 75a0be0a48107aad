import { MemoryBroker, connectClient, startService } from '@warren/amqp';

describe('Warren over MemoryBroker', () => {
  it('serves a call, a notification and a batch, in both reply modes', async () => {
    const bus = new MemoryBroker();
    const heard: unknown[] = [];
    const service = await startService({
      connection: bus.connect(), name: 'calc',
      methods: { add: { handler: (p) => (p as number[]).reduce((x, y) => x + y, 0) } },
      notifications: { logged: { handler: (params) => void heard.push(params) } },
    });
    for (const replyMode of ['named', 'direct'] as const) {
      const client = await connectClient({ connection: bus.connect(), replyMode });
      await expect(client.call('add', [4, 5])).resolves.toBe(9);
      await client.notify('logged', ['x']);
      const batch = await client.batch([{ method: 'add', params: [1, 2] }, { method: 'logged', params: ['y'], notification: true }]);
      expect(batch).toEqual([{ status: 'fulfilled', value: 3 }, { status: 'fulfilled', value: undefined }]);
      await client.close();
    }
    await service.close();
    await bus.close();
    expect(heard.length).toBe(4);
  });
});
