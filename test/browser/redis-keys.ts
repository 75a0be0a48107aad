import { Redis } from 'ioredis';
import { redisUrl } from '@warren/testkit';

/** Deletes every key under a prefix this test file made up itself. */
export async function deleteKeysUnder(prefix: string): Promise<void> {
  const redis = new Redis(redisUrl(), { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      if (batch.length > 0) await redis.del(...batch);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
