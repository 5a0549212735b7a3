import { createHash } from 'node:crypto';
import type { DbHandle } from './index.js';

/** The key of a row kept per virtual path: SHA-256 of the path (paths are longer than an index takes). */
export const pathHash = (path: string) => createHash('sha256').update(path).digest('hex');

type PathTable = 'object_tags' | 'object_digests';

/**
 * Writes the row of a path, inserting or replacing it. Two writers at once: the later wins (as
 * on S3). MySQL counts changed rows, not matched ones, so an update of equal values counts 0: the
 * row's presence after a refused insert says the insert was a duplicate.
 */
export async function upsertByPath(h: DbHandle, table: PathTable, path: string, row: Record<string, unknown>): Promise<void> {
  const path_hash = pathHash(path);
  const values = { ...row, path, updated_at: Date.now() } as never;
  const update = () => h.db.updateTable(table).set(values).where('path_hash', '=', path_hash).executeTakeFirst();
  if (Number((await update()).numUpdatedRows) > 0) return;
  try {
    await h.db.insertInto(table).values({ ...(values as object), path_hash } as never).execute();
  } catch (err) {
    await update();
    const found = await h.db.selectFrom(table).select('path').where('path_hash', '=', path_hash).executeTakeFirst();
    if (!found) throw err;
  }
}
