import type { DbHandle } from './index.js';
import { pathHash, upsertByPath } from './path-rows.js';

export type Tag = [key: string, value: string];

/** The tags of one object and the size and modification time of the object they were set on. */
export interface ObjectTags {
  path: string;
  tags: Tag[];
  size: number;
  modified: number;
}

/** S3 object tags (table `object_tags`), one row per tagged object, keyed by its virtual path. */
export class ObjectTagsRepo {
  constructor(private readonly h: DbHandle) {}

  async get(path: string): Promise<ObjectTags | undefined> {
    const r = await this.h.db.selectFrom('object_tags').selectAll().where('path_hash', '=', pathHash(path)).executeTakeFirst();
    if (!r || r.path !== path) return undefined;
    return { path: r.path, tags: JSON.parse(r.tags) as Tag[], size: Number(r.size), modified: Number(r.modified) };
  }

  /** Replaces the tags of a path (an empty list removes the row). */
  async set(t: ObjectTags): Promise<void> {
    if (t.tags.length === 0) return this.delete(t.path);
    await upsertByPath(this.h, 'object_tags', t.path, { tags: JSON.stringify(t.tags), size: t.size, modified: t.modified });
  }

  async delete(path: string): Promise<void> {
    await this.h.db.deleteFrom('object_tags').where('path_hash', '=', pathHash(path)).execute();
  }
}
