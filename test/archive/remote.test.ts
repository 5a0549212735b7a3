import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { missingPrograms, type Peer, scratch, startRcloneServe } from '../drivers/peers.js';
import { BUCKET, S3_KEY, type S3Peer, startS3rver } from '../drivers/s3-peer.js';

/** A zip of 40 incompressible files of 100 KiB (4 MB) made by Info-ZIP: listing it must not read it. */
function makeBigZip(): { zip: Buffer; files: Record<string, Buffer> } {
  const dir = scratch('archive-remote');
  const files: Record<string, Buffer> = {};
  for (let i = 0; i < 40; i++) files[`part/f${String(i).padStart(2, '0')}.bin`] = randomBytes(100 * 1024);
  for (const [rel, body] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), body);
  }
  execFileSync('zip', ['-q', '-r', 'big.zip', 'part'], { cwd: dir });
  const zip = readFileSync(path.join(dir, 'big.zip'));
  rmSync(dir, { recursive: true, force: true });
  return { zip, files };
}

async function browseCountingBytes(s: TestServer, token: string, p: string, files: Record<string, Buffer>, size: number) {
  const m = await s.api('POST', '/api/fs/archive/meta', { token, body: { path: p, refresh: true } });
  expect(m.code, m.message).toBe(200);
  expect(m.data.content[0].children).toHaveLength(40);
  // The same listing, as the service reads it, with the bytes that came from the peer.
  const { archive, source } = await s.core.archives.open(p);
  expect([...archive.entries].filter((e) => !e.isDir)).toHaveLength(40);
  await archive.close();
  expect(source.bytesRead).toBeGreaterThan(0);
  expect(source.bytesRead).toBeLessThan(size / 10);
  const res = await s.inject({ method: 'GET', url: `/ae${p}?inner=/part/f17.bin&sign=${s.core.signer.sign(p)}` });
  expect(res.statusCode).toBe(200);
  expect(res.rawPayload.equals(files['part/f17.bin']!)).toBe(true);
  return source.bytesRead;
}

describe('zips on remote storages are browsed with ranged reads of the central directory', () => {
  const { zip, files } = makeBigZip();
  let s: TestServer;
  let token: string;
  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!);
    token = await s.login();
  });
  afterAll(() => s.destroy());

  describe('S3 (s3rver)', () => {
    let peer: S3Peer;
    beforeAll(async () => {
      peer = await startS3rver();
      await peer.put('root/big.zip', zip);
      const addition = { bucket: BUCKET, endpoint: `http://127.0.0.1:${peer.port}`, access_key_id: S3_KEY, secret_access_key: S3_KEY, root_folder_path: '/root', region: 'us-east-1', force_path_style: true, list_object_version: 'v1' };
      const r = await s.api('POST', '/api/admin/storage/create', { token, body: { mount_path: '/s3', driver: 'S3', addition: JSON.stringify(addition) } });
      expect(r.code, r.message).toBe(200);
    });
    afterAll(() => peer.destroy());

    it('lists a 4 MB zip reading less than a tenth of it, and reads one entry', async () => {
      await browseCountingBytes(s, token, '/s3/big.zip', files, zip.length);
    });

    it('extracts a part of it back into the bucket with a task, byte for byte', async () => {
      const r = await s.api('POST', '/api/fs/archive/decompress', { token, body: { src_dir: '/s3', name: ['big.zip'], dst_dir: '/s3/out', inner_path: '/part/f03.bin' } });
      expect(r.code, r.message).toBe(200);
      const end = Date.now() + 20_000;
      while (Date.now() < end && !(await peer.read('root/out/f03.bin'))) await new Promise((res) => setTimeout(res, 50));
      expect((await peer.read('root/out/f03.bin'))?.equals(files['part/f03.bin']!)).toBe(true);
    });
  });

  describe.skipIf(missingPrograms('SFTP peer', 'rclone', 'ssh-keygen'))('SFTP (rclone serve sftp)', () => {
    let peer: Peer;
    let served: string;
    beforeAll(async () => {
      served = scratch('archive-sftp');
      writeFileSync(path.join(served, 'big.zip'), zip);
      peer = await startRcloneServe('sftp', served, ['--user', 'alice', '--pass', 'pw']);
      const addition = { address: `127.0.0.1:${peer.port}`, username: 'alice', password: 'pw', root_folder_path: '/' };
      const r = await s.api('POST', '/api/admin/storage/create', { token, body: { mount_path: '/sftp', driver: 'SFTP', addition: JSON.stringify(addition) } });
      expect(r.code, r.message).toBe(200);
    });
    afterAll(async () => {
      await peer.destroy();
      rmSync(served, { recursive: true, force: true });
    });

    it('lists a 4 MB zip reading less than a tenth of it, and reads one entry', async () => {
      await browseCountingBytes(s, token, '/sftp/big.zip', files, zip.length);
    });
  });
});
