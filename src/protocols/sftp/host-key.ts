import { generateKeyPair, generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type * as Ssh2 from 'ssh2';

export const ED25519_HOST_KEY_FILE = 'ssh_host_ed25519_key';
export const RSA_HOST_KEY_FILE = 'ssh_host_rsa_key';

/** The SSH public key line (`ssh-ed25519 AAAA… comment`) of a private key. */
export function publicKeyLine(ssh2: typeof Ssh2, pem: Buffer | string, comment: string): string {
  const key = ssh2.utils.parseKey(pem);
  if (key instanceof Error || Array.isArray(key)) throw new Error('the host key can not be read');
  return `${key.type} ${key.getPublicSSH().toString('base64')} ${comment}`;
}

function usable(ssh2: typeof Ssh2, pem: Buffer): boolean {
  const key = ssh2.utils.parseKey(pem);
  return !(key instanceof Error) && !Array.isArray(key) && key.isPrivateKey();
}

function sshString(data: Buffer | string): Buffer {
  const body = typeof data === 'string' ? Buffer.from(data) : data;
  const len = Buffer.alloc(4);
  len.writeUInt32BE(body.length);
  return Buffer.concat([len, body]);
}

/**
 * A new Ed25519 key in the unencrypted `openssh-key-v1` format (what `ssh-keygen -t ed25519`
 * writes): the only private-key format in which ssh2 reads Ed25519.
 */
export function newEd25519Pem(comment: string): Buffer {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const seed = Buffer.from(privateKey.export({ format: 'jwk' }).d!, 'base64url');
  const pub = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  const publicBlob = Buffer.concat([sshString('ssh-ed25519'), sshString(pub)]);
  const check = randomBytes(4);
  let secret = Buffer.concat([check, check, sshString('ssh-ed25519'), sshString(pub), sshString(Buffer.concat([seed, pub])), sshString(comment)]);
  const pad = (8 - (secret.length % 8)) % 8;
  secret = Buffer.concat([secret, Buffer.from(Array.from({ length: pad }, (_, i) => i + 1))]);
  const count = Buffer.alloc(4);
  count.writeUInt32BE(1);
  const blob = Buffer.concat([Buffer.from('openssh-key-v1\0'), sshString('none'), sshString('none'), sshString(''), count, sshString(publicBlob), sshString(secret)]);
  const lines = blob.toString('base64').match(/.{1,70}/g)!;
  return Buffer.from(`-----BEGIN OPENSSH PRIVATE KEY-----\n${lines.join('\n')}\n-----END OPENSSH PRIVATE KEY-----\n`);
}

async function newRsaPem(): Promise<Buffer> {
  const { privateKey } = await promisify(generateKeyPair)('rsa', {
    modulusLength: 4096,
    publicKeyEncoding: { type: 'pkcs1', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  });
  return Buffer.from(privateKey);
}

function readUsable(ssh2: typeof Ssh2, file: string): Buffer | undefined {
  try {
    const pem = readFileSync(file);
    if (usable(ssh2, pem)) return pem;
  } catch {
    // missing
  }
  return undefined;
}

function store(ssh2: typeof Ssh2, file: string, pem: Buffer): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.tmp-${process.pid}`;
  writeFileSync(tmp, pem, { mode: 0o600 });
  renameSync(tmp, file);
  writeFileSync(`${file}.pub`, `${publicKeyLine(ssh2, pem, 'atrium')}\n`, { mode: 0o644 });
}

/**
 * The server's host keys, kept in `<data>/ssh/` (mode 0600, each with its `.pub`) so clients see
 * the same keys every time; an unreadable key is made again:
 * - `ssh_host_ed25519_key` (OpenSSH format), made on the first start in a millisecond;
 * - `ssh_host_rsa_key` (RSA 4096, PKCS#1 PEM) when it is there (made by an earlier version,
 *   known to clients) or `rsaWanted` (`sftp.rsa_host_key`; making it takes seconds).
 */
export async function loadHostKeys(ssh2: typeof Ssh2, dataDir: string, rsaWanted: boolean): Promise<Buffer[]> {
  const dir = path.join(dataDir, 'ssh');
  const edFile = path.join(dir, ED25519_HOST_KEY_FILE);
  let ed = readUsable(ssh2, edFile);
  if (!ed) {
    ed = newEd25519Pem('atrium');
    store(ssh2, edFile, ed);
  }
  const rsaFile = path.join(dir, RSA_HOST_KEY_FILE);
  let rsa = readUsable(ssh2, rsaFile);
  if (!rsa && rsaWanted) {
    rsa = await newRsaPem();
    store(ssh2, rsaFile, rsa);
  }
  return rsa ? [ed, rsa] : [ed];
}
