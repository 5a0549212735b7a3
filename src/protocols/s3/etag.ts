import { createHash } from 'node:crypto';
import type { Obj } from '../../drivers/types.js';

const MD5 = /^[0-9a-f]{32}$/i;

/**
 * An object's ETag, quoted: its MD5 where the storage has one, or where S3 computed it as the
 * object was written (`md5`, see digests.ts); otherwise stable while the file is unchanged
 * (modification time and size), with a `-` so clients don't take it for an MD5.
 */
export function etagOf(obj: Obj, md5?: string): string {
  const known = obj.hash?.md5 && MD5.test(obj.hash.md5) ? obj.hash.md5 : md5 && MD5.test(md5) ? md5 : undefined;
  if (known) return `"${known.toLowerCase()}"`;
  const stamp = createHash('md5').update(`${obj.modified.getTime()}:${obj.size}`).digest('hex');
  return `"${stamp}-1"`;
}
