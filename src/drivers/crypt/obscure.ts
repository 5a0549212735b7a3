import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

// rclone's "obscure": reversible (not secret) AES-256-CTR under a key published in rclone's
// source, so passwords in config files are not plain text. Crypt passwords may be given so.

const KEY = Buffer.from('9c935b48730a554d6bfd7c63c886a92bd390198eb8128afbf4de162b8b95f638', 'hex');

export const OBFUSCATED_PREFIX = '___Obfuscated___';

export function obscure(plain: string): string {
  const iv = randomBytes(16);
  const c = createCipheriv('aes-256-ctr', KEY, iv);
  return Buffer.concat([iv, c.update(plain, 'utf8'), c.final()]).toString('base64url');
}

export function reveal(obscured: string): string {
  const raw = Buffer.from(obscured, 'base64url');
  if (raw.length < 16) throw new Error('input too short when revealing password - is it obscured?');
  const d = createDecipheriv('aes-256-ctr', KEY, raw.subarray(0, 16));
  return Buffer.concat([d.update(raw.subarray(16)), d.final()]).toString('utf8');
}
