// The event log's Redis client (@warren/redis): a service whose event loop was blocked for longer than
// the command timeout (a handler's synchronous work, a long garbage collection) reads the replies that
// came meanwhile instead of failing its audit or progress writes.
import { Teardown, outcomesAcrossStalls, redisUrl, uniqueName } from '@warren/testkit';
import { RedisEventLog } from '../src/index';

const td = new Teardown();
afterAll(() => td.run());

it('answers reads whose replies came while the event loop was blocked past the command timeout', async () => {
  const log = new RedisEventLog({ url: redisUrl(), keyPrefix: uniqueName('evl-stall'), commandTimeoutMs: 200 });
  td.add(() => log.close());
  // Connected first (the log connects lazily): the replies, not the connect, are what arrive during the blocks.
  await log.get('none');
  const outcomes = await outcomesAcrossStalls((i) => (i % 2 === 0 ? log.get('none') : log.recent('none', 5)), { rounds: 6, blockMs: 400 });
  expect(outcomes).toEqual(Array(6).fill('ok'));
});
