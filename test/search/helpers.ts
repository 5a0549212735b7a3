import { expect } from 'vitest';
import type { TestServer } from '../helpers/server.js';

/** `parent/name` of every search hit, in answer order. */
export function hits(r: { code: number; data: any }): string[] {
  expect(r.code).toBe(200);
  return r.data.content.map((h: any) => (h.parent === '/' ? `/${h.name}` : `${h.parent}/${h.name}`));
}

/** Waits for the indexer's queued jobs (builds, updates, auto updates). */
export async function waitIdle(s: TestServer): Promise<void> {
  await s.core.search.indexer.idle();
  await s.core.search.indexer.idle();
}

/** Starts a build through the API and waits until the progress says it is done. */
export async function buildIndex(s: TestServer, token: string): Promise<any> {
  const r = await s.api('POST', '/api/admin/index/build', { token });
  expect(r).toEqual({ code: 200, message: 'success', data: null });
  await waitIdle(s);
  const p = await s.api('GET', '/api/admin/index/progress', { token });
  expect(p.code).toBe(200);
  expect(p.data.is_done).toBe(true);
  return p.data;
}
