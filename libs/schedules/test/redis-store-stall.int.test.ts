// The schedule store's Redis client (@warren/redis): a scheduler whose event loop was blocked for longer
// than the command timeout (a long garbage collection, a busy service beside it) reads the replies that
// came meanwhile instead of failing them, so it does not take its lease or a claim for lost.
import { Teardown, outcomesAcrossStalls, uniqueName, redisUrl } from '@warren/testkit';
import { RedisScheduleStore } from '../src';

const td = new Teardown();
afterAll(() => td.run());

it('answers store reads whose replies came while the event loop was blocked past the command timeout', async () => {
  const store = new RedisScheduleStore({ url: redisUrl(), keyPrefix: uniqueName('sched-stall'), commandTimeoutMs: 200 });
  td.add(() => store.close());
  // Connected first (the store connects lazily): the replies, not the connect, are what arrive during the blocks.
  await store.get('none');
  const outcomes = await outcomesAcrossStalls((i) => (i % 2 === 0 ? store.get('none') : store.states(['none'])), { rounds: 6, blockMs: 400 });
  expect(outcomes).toEqual(Array(6).fill('ok'));
});
