import { createHash } from 'node:crypto';
import type { Obj } from '../../drivers/types.js';

/**
 * An object's ETag, quoted: its MD5 where the storage has one; otherwise stable while the file
 * is unchanged (modification time and size), with a `-` so clients don't take it for an MD5.
 */
export function etagOf(obj: Obj): string {
  const md5 = obj.hash?.md5;
  if (md5 && /^[0-9a-f]{32}$/i.test(md5)) return `"${md5.toLowerCase()}"`;
  const stamp = createHash('md5').update(`${obj.modified.getTime()}:${obj.size}`).digest('hex');
  return `"${stamp}-1"`;
}
