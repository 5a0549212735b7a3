import type { DbHandle } from './index.js';
import { pathHash, upsertByPath } from './path-rows.js';

/** What S3 knows of an object it wrote: valid while the object has this size and time. */
export interface ObjectDigest {
  path: string;
  size: number;
  modified: number;
  /** hex, '' when not known */
  md5: string;
  /** `x-amz-meta-mtime` as sent, '' when none */
  mtime: string;
}

/** The digests of objects written through S3 (table `object_digests`), keyed by virtual path. */
export class ObjectDigestsRepo {
  constructor(private readonly h: DbHandle) {}

  async get(path: string): Promise<ObjectDigest | undefined> {
    const r = await this.h.db.selectFrom('object_digests').selectAll().where('path_hash', '=', pathHash(path)).executeTakeFirst();
    if (!r || r.path !== path) return undefined;
    return { path: r.path, size: Number(r.size), modified: Number(r.modified), md5: r.md5, mtime: r.mtime };
  }

  async set(d: ObjectDigest): Promise<void> {
    await upsertByPath(this.h, 'object_digests', d.path, { size: d.size, modified: d.modified, md5: d.md5, mtime: d.mtime });
  }

  async delete(path: string): Promise<void> {
    await this.h.db.deleteFrom('object_digests').where('path_hash', '=', pathHash(path)).execute();
  }
}
