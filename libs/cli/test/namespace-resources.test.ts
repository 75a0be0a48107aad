import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { managementResources } from '../src/commands/namespace-resources';

let server: Server;
const asked: { url: string | undefined; auth: string | undefined }[] = [];
beforeAll(async () => {
  server = createServer((req: IncomingMessage, res) => {
    asked.push({ url: req.url, auth: req.headers.authorization });
    const body = req.url?.startsWith('/api/queues/')
      ? [{ name: 'trial.svc.calc', messages: 3, consumers: 0 }, { name: 'trial.svc.calc.retry.1000' }, { name: 'trial2.svc.x' }, { name: 'other.svc.calc' }]
      : [{ name: 'trial.rpc' }, { name: 'trial.delay.3' }, { name: 'trialx.rpc' }, { name: 'amq.direct' }];
    res.setHeader('content-type', 'application/json').end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

it("lists through the management API exactly the vhost's queues and exchanges named NAME.*, with the URL's credentials", async () => {
  const { port } = server.address() as AddressInfo;
  const found = await managementResources(`http://ops:p%40ss@127.0.0.1:${port}`, 'team/a', 'trial');
  expect(found).toEqual({
    source: 'management',
    queues: [{ name: 'trial.svc.calc', messages: 3, consumers: 0 }, { name: 'trial.svc.calc.retry.1000', messages: 0, consumers: 0 }],
    exchanges: ['trial.delay.3', 'trial.rpc'],
  });
  expect(asked.map((a) => a.url?.split('?')[0]).sort()).toEqual(['/api/exchanges/team%2Fa', '/api/queues/team%2Fa']);
  expect(new Set(asked.map((a) => a.auth))).toEqual(new Set([`Basic ${Buffer.from('ops:p@ss').toString('base64')}`]));
});
