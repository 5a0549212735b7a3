import type { Mounted } from '../../fs/storages.js';
import { VFS_FLAG, type VfsStats } from './openssh-ext.js';

/** The block size the figures are counted in (storages report bytes). */
const BLOCK = 4096;

/**
 * Space figures of a storage (the view's storageOf a path the user may read), for
 * `statvfs@openssh.com`: the driver's usage (its total and free bytes) in blocks of 4 KiB; a
 * storage whose driver reports none, or fails to, answers undefined. Counts of files are not
 * known: they are 0.
 */
export async function storageSpace(mounted: Mounted): Promise<VfsStats | undefined> {
  const driver = mounted.driver;
  if (!driver?.usage) return undefined;
  const usage = await driver.usage().catch(() => undefined);
  if (!usage) return undefined;
  const free = Math.floor(usage.free / BLOCK);
  return {
    bsize: BLOCK,
    frsize: BLOCK,
    blocks: Math.floor(usage.total / BLOCK),
    bfree: free,
    bavail: free,
    files: 0,
    ffree: 0,
    favail: 0,
    fsid: mounted.row.id,
    flag: VFS_FLAG.NOSUID,
    namemax: 255,
  };
}
