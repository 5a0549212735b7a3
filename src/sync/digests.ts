import type { Obj } from '../drivers/types.js';
import { HASH_NAMES, sharedHash } from '../fs/compare.js';
import { isAbort } from '../errors.js';
import type { Tree } from './plan.js';

/** Reads a file of one side to learn its digest; undefined where that side's storage is not on this machine's disk. */
export type Digester = (side: 'src' | 'dst', rel: string, algo: string) => Promise<string | undefined>;

/**
 * compare `checksum`: where both sides hold a file of one size, share no hash, and the last run's
 * record does not vouch for the pair (`vouched`), the hash one side lacks is learned by reading
 * the file (as rclone does for local files): the hash the other side carries (S3's MD5, a
 * WebDAV server's SHA-1), MD5 when neither carries one. Storages that are not on this machine's
 * disk are not downloaded for it, and a file that can not be read is left unhashed: such a pair
 * is compared by size. The trees get copies of the objects with the hash (listings' objects may
 * be shared with the listing cache). Answers how many files were read.
 */
export async function learnDigests(src: Tree, dst: Tree, vouched: (rel: string, s: Obj, d: Obj) => boolean, digest: Digester, parallel: number, signal?: AbortSignal): Promise<number> {
  const todo: Array<[string, 'src' | 'dst', string]> = [];
  for (const [rel, s] of src.files) {
    const d = dst.files.get(rel);
    if (!d || d.size !== s.size || sharedHash(s, d) || vouched(rel, s, d)) continue;
    const algo = HASH_NAMES.find((h) => s.hash?.[h] || d.hash?.[h]) ?? 'md5';
    if (!s.hash?.[algo]) todo.push([rel, 'src', algo]);
    if (!d.hash?.[algo]) todo.push([rel, 'dst', algo]);
  }
  let next = 0;
  let read = 0;
  const worker = async () => {
    while (next < todo.length) {
      signal?.throwIfAborted();
      const [rel, side, algo] = todo[next++]!;
      const tree = side === 'src' ? src : dst;
      let hex: string | undefined;
      try {
        hex = await digest(side, rel, algo);
      } catch (err) {
        if (isAbort(err) || signal?.aborted) throw err;
      }
      if (hex === undefined) continue;
      read++;
      const o = tree.files.get(rel)!;
      tree.files.set(rel, { ...o, hash: { ...o.hash, [algo]: hex } });
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(parallel, todo.length)) }, worker));
  return read;
}
