import { RabbitCluster } from '@warren/testkit';
void (async () => {
  const c = await RabbitCluster.start({ size: 1, prefix: 'warren-dly' });
  const n = c.nodes[0]!;
  console.log(JSON.stringify({ name: n.name, url: n.url }));
  process.on('SIGTERM', () => void c.stop().then(() => process.exit(0)));
  setInterval(() => undefined, 1 << 30);
})();
