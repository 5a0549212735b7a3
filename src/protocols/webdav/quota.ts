import type { Storages } from '../../fs/storages.js';
import { isSubPath } from '../../util/paths.js';

/** RFC 4331's figures for a collection, in bytes. */
export interface DavQuota {
  available: number;
  used: number;
}

/**
 * The space of a collection (RFC 4331 `quota-available-bytes`, `quota-used-bytes`): the usage of
 * the storage holding it, or — for a folder that exists only because storages are mounted below
 * it (a user's `/` above several mounts) — the sum over the storages below it that the principal
 * may read, each counted once. Undefined when no such storage reports its usage. Where the
 * user's or a group's quota covers the collection, that is shown instead (properties.ts).
 */
export async function collectionQuota(storages: Storages, p: string, mayRead: (p: string) => boolean): Promise<DavQuota | undefined> {
  const holder = storages.resolve(p, { turn: false })?.storage;
  const mounts = holder ? [holder] : storages.all().filter((m) => m.actualMount !== p && isSubPath(p, m.actualMount) && mayRead(m.actualMount));
  const seen = new Set<string>();
  let total = 0;
  let free = 0;
  let any = false;
  for (const m of mounts) {
    // replicas of one mount (`.balance`) hold the same files: the mount path counts once
    if (seen.has(m.actualMount) || !m.driver?.usage) continue;
    seen.add(m.actualMount);
    const u = await m.driver.usage().catch(() => undefined);
    if (!u) continue;
    total += u.total;
    free += u.free;
    any = true;
  }
  return any ? { available: Math.max(0, free), used: Math.max(0, total - free) } : undefined;
}
