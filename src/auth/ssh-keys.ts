import { createHash } from 'node:crypto';
import type * as Ssh2 from 'ssh2';
import { lazyRequire } from '../util/lazy-require.js';

const loadSsh2 = lazyRequire<typeof Ssh2>('ssh2');

const KEY_TYPES = /(?:^|\s)((?:ssh-(?:rsa|ed25519|dss))|(?:ecdsa-sha2-nistp(?:256|384|521))|(?:sk-(?:ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com))\s+([A-Za-z0-9+/]+={0,2})(?:\s+(.*))?$/;

export interface ParsedKey {
  type: string;
  /** The key as `type base64` (no options, no comment). */
  text: string;
  /** `SHA256:` + unpadded base64 of the SHA-256 of the key blob, as `ssh-keygen -l` prints. */
  fingerprint: string;
  blob: Buffer;
}

/**
 * Parses one OpenSSH public key (an authorized_keys line: options before the type and a
 * comment after it are allowed). Returns undefined for anything else, private keys included.
 */
export function parsePublicKey(line: string): ParsedKey | undefined {
  const m = KEY_TYPES.exec(line.trim().split('\n')[0]!.trim());
  if (!m) return undefined;
  const text = `${m[1]} ${m[2]}`;
  const key = loadSsh2().utils.parseKey(text);
  if (key instanceof Error || Array.isArray(key) || key.isPrivateKey()) return undefined;
  const blob = key.getPublicSSH();
  if (!Buffer.isBuffer(blob) || blob.length === 0) return undefined;
  return { type: key.type, text, blob, fingerprint: `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}` };
}
