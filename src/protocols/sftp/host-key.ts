import { generateKeyPair } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type * as Ssh2 from 'ssh2';

export const HOST_KEY_FILE = 'ssh_host_rsa_key';

/** The SSH public key line (`ssh-rsa AAAA… comment`) of a private key. */
export function publicKeyLine(ssh2: typeof Ssh2, pem: Buffer | string, comment: string): string {
  const key = ssh2.utils.parseKey(pem);
  if (key instanceof Error || Array.isArray(key)) throw new Error('the host key can not be read');
  return `${key.type} ${key.getPublicSSH().toString('base64')} ${comment}`;
}

function usable(ssh2: typeof Ssh2, pem: Buffer): boolean {
  const key = ssh2.utils.parseKey(pem);
  return !(key instanceof Error) && !Array.isArray(key) && key.isPrivateKey();
}

/**
 * The server's host key: `<data>/ssh/ssh_host_rsa_key` (RSA 4096, PKCS#1 PEM, mode 0600) with
 * its `.pub`, made on the first start and kept, so clients see the same host key every time.
 * An unreadable key is made again.
 */
export async function loadHostKey(ssh2: typeof Ssh2, dataDir: string): Promise<Buffer> {
  const dir = path.join(dataDir, 'ssh');
  const file = path.join(dir, HOST_KEY_FILE);
  try {
    const pem = readFileSync(file);
    if (usable(ssh2, pem)) return pem;
  } catch {
    // missing: made below
  }
  const { privateKey } = await promisify(generateKeyPair)('rsa', {
    modulusLength: 4096,
    publicKeyEncoding: { type: 'pkcs1', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  });
  const pem = Buffer.from(privateKey);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = `${file}.tmp-${process.pid}`;
  writeFileSync(tmp, pem, { mode: 0o600 });
  renameSync(tmp, file);
  writeFileSync(`${file}.pub`, `${publicKeyLine(ssh2, pem, 'atrium')}\n`, { mode: 0o644 });
  return pem;
}
