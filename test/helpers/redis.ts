import { Redis } from 'ioredis';
import { reachable } from './backends.js';

/** The machine's Redis, shared by every engineer's tests: each test uses a key prefix of its own. */
export const REDIS_URL = process.env.ATRIUM_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export function redisReachable(): Promise<boolean> {
  const u = new URL(REDIS_URL);
  return reachable(u.hostname, Number(u.port || 6379));
}

/** Deletes every key under a test's prefix. */
export async function dropRedisKeys(prefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL);
  try {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
  } finally {
    await redis.quit();
  }
}
