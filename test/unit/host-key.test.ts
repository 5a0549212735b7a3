import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as ssh2 from 'ssh2';
import { afterEach, describe, expect, it } from 'vitest';
import { loadHostKeys } from '../../src/protocols/sftp/host-key.js';

const dirs: string[] = [];
function dataDir(): string {
  const d = mkdtempSync(path.join(os.tmpdir(), 'atrium-hostkey-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function typeOf(pem: Buffer): string {
  const key = ssh2.utils.parseKey(pem);
  if (key instanceof Error || Array.isArray(key)) throw new Error('unreadable key');
  expect(key.isPrivateKey()).toBe(true);
  return key.type;
}

describe('SFTP host keys', () => {
  it('makes one Ed25519 key by default and returns the same one on the next start', async () => {
    const d = dataDir();
    const first = await loadHostKeys(ssh2, d, false);
    expect(first.map(typeOf)).toEqual(['ssh-ed25519']);
    // signs: ssh2 can use it as a server key
    const key = ssh2.utils.parseKey(first[0]!) as ssh2.ParsedKey;
    const sig = key.sign(Buffer.from('data'));
    expect(key.verify(Buffer.from('data'), sig as Buffer)).toBe(true);
    const file = path.join(d, 'ssh', 'ssh_host_ed25519_key');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(`${file}.pub`, 'utf8')).toBe(`ssh-ed25519 ${key.getPublicSSH().toString('base64')} atrium\n`);
    const again = await loadHostKeys(ssh2, d, false);
    expect(again[0]!.equals(first[0]!)).toBe(true);
  });

  it('keeps offering an RSA key made by an earlier version, and remakes an unreadable Ed25519 key', async () => {
    const d = dataDir();
    mkdirSync(path.join(d, 'ssh'));
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs1', format: 'pem' }, publicKeyEncoding: { type: 'pkcs1', format: 'pem' } }).privateKey;
    writeFileSync(path.join(d, 'ssh', 'ssh_host_rsa_key'), rsa, { mode: 0o600 });
    writeFileSync(path.join(d, 'ssh', 'ssh_host_ed25519_key'), 'garbage', { mode: 0o600 });
    const keys = await loadHostKeys(ssh2, d, false);
    expect(keys.map(typeOf)).toEqual(['ssh-ed25519', 'ssh-rsa']);
    expect(keys[1]!.toString()).toBe(rsa);
  });

  it('makes an RSA 4096 key too when asked', async () => {
    const d = dataDir();
    const keys = await loadHostKeys(ssh2, d, true);
    expect(keys.map(typeOf)).toEqual(['ssh-ed25519', 'ssh-rsa']);
    expect(readFileSync(path.join(d, 'ssh', 'ssh_host_rsa_key'), 'utf8')).toMatch(/^-----BEGIN RSA PRIVATE KEY-----/);
  }, 60_000);
});
