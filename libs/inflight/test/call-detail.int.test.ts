// Call detail against the real Redis: params (bounded) and trace id on the record, the progress log
// written by the progress script (bounded, with a TTL), as over memory (call-detail.test.ts).
import { silentLogger } from '@warren/logger';
import { Teardown, redisUrl, uniqueName } from '@warren/testkit';
import { keys } from '../src/keys';
import { RedisStore } from '../src/redis-store';
import { InflightView } from '../src/view';
import { checkParamsTraceAndProgress, checkTruncatedParams } from './call-detail-check';
import { TestPrefix } from './support';

const td = new Teardown();
const tp = new TestPrefix();
const k = keys(tp.prefix);
let store: RedisStore;
let view: InflightView;

beforeAll(async () => {
  td.add(() => tp.destroy());
  store = new RedisStore(redisUrl(), 2000, k, silentLogger(), { autoPipelining: false, history: { done: { entries: 100, ageMs: 600_000 }, failed: { entries: 100, ageMs: 600_000 } } });
  td.add(() => store.close());
  view = new InflightView({ redis: redisUrl(), keyPrefix: tp.prefix });
  td.add(() => view.close());
  expect(await store.ready(5000)).toBe(true);
});
afterAll(() => td.run());

it("keeps a call's params, trace id and last progress reports, the log with a TTL", async () => {
  const id = uniqueName('c');
  await checkParamsTraceAndProgress(store, view, id, uniqueName('tok'));
  const ttl = await tp.redis.pttl(k.progressLog(id));
  expect(ttl).toBeGreaterThan(0);
  expect(ttl).toBeLessThanOrEqual(60_000);
});

it('keeps params past the bound cut, with a marker, and nothing for a call without them', async () => {
  await checkTruncatedParams(store, view, uniqueName('big'), uniqueName('bare'));
});
