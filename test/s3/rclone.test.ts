import { execFile } from 'node:child_process';
import { createHash, randomBytes, randomInt } from 'node:crypto';
import { createReadStream, createWriteStream, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProtocolListener } from '../../src/protocols/listeners.js';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { requireProgram } from '../webdav/dav-helpers.js';
import { KEY_ID, SECRET, startS3 } from './s3-helpers.js';

const run = promisify(execFile);
const present = requireProgram('rclone', "the rclone s3 backend's round trip");

/** 1 000 files in 20 folders, sizes 0 B – 64 KiB, names with spaces, # and non-ASCII, plus one file above rclone's multipart cutoff. */
function sourceTree(): Record<string, Buffer> {
  const tree: Record<string, Buffer> = {};
  for (let i = 0; i < 1000; i++) {
    const dir = `d${i % 10}/${i % 20 < 10 ? 'plain' : 'ü sub #2'}`;
    tree[`${dir}/file ${i}${i % 3 === 0 ? ' é' : ''}.bin`] = randomBytes(i % 97 === 0 ? 0 : randomInt(65536));
  }
  tree['large/multipart.bin'] = randomBytes(12 * 1024 * 1024);
  return tree;
}

/** A file of `size` bytes that no two MiB of repeat (a random MiB, each copy stamped with its index). */
async function writeBigFile(file: string, size: number): Promise<void> {
  const block = randomBytes(1 << 20);
  async function* blocks() {
    for (let at = 0; at < size; at += block.length) {
      const b = Buffer.from(block.subarray(0, Math.min(block.length, size - at)));
      b.writeUInt32BE(at / block.length, 0);
      yield b;
    }
  }
  await pipeline(blocks, createWriteStream(file));
}

async function sha256Of(file: string): Promise<string> {
  const h = createHash('sha256');
  await pipeline(createReadStream(file, { highWaterMark: 1 << 20 }), h);
  return h.digest('hex');
}

describe.runIf(present)('rclone s3 backend round trip', () => {
  let s: TestServer;
  let listener: ProtocolListener;
  let root: string;
  let src: string;
  let back: string;
  let env: NodeJS.ProcessEnv;
  const tree = sourceTree();

  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!);
    const admin = await s.login();
    root = makeTree({});
    src = makeTree(tree);
    back = mkdtempSync(path.join(os.tmpdir(), 'atrium-rclone-s3-back-'));
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/disk', root) })).code).toBe(200);
    let endpoint: string;
    ({ listener, endpoint } = await startS3(s, [{ name: 'bkt', path: '/disk' }]));
    // The AWS SDK inside rclone reads AWS_* variables (a CA bundle, a profile): none from the host.
    const host = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_')));
    env = {
      ...host,
      RCLONE_CONFIG: '/dev/null',
      RCLONE_CONFIG_X_TYPE: 's3',
      RCLONE_CONFIG_X_PROVIDER: 'Other',
      RCLONE_CONFIG_X_ENDPOINT: endpoint,
      RCLONE_CONFIG_X_ACCESS_KEY_ID: KEY_ID,
      RCLONE_CONFIG_X_SECRET_ACCESS_KEY: SECRET,
      RCLONE_CONFIG_X_FORCE_PATH_STYLE: 'true',
      // Above 5 MiB rclone uploads in parts: the big file goes through multipart.
      RCLONE_CONFIG_X_UPLOAD_CUTOFF: '5M',
      RCLONE_CONFIG_X_CHUNK_SIZE: '5M',
    };
  });
  afterAll(async () => {
    await listener?.close();
    await s?.destroy();
    for (const d of [root, src, back]) if (d) rmSync(d, { recursive: true, force: true });
  });

  const rclone = (...args: string[]) => run('rclone', [...args, '--transfers', '8', '--checkers', '8'], { env, maxBuffer: 16 << 20, timeout: 200_000 });

  it('copies 1 001 files in and out; rclone check is clean both ways', async () => {
    await rclone('copy', src, 'X:bkt/tree');
    const inCheck = await rclone('check', src, 'X:bkt/tree');
    expect(inCheck.stderr).toContain('0 differences found');
    expect(inCheck.stderr).toContain('1001 matching files');
    const names = Object.keys(tree);
    for (const rel of [names[0]!, names[513]!, names[999]!, 'large/multipart.bin']) {
      expect(readFileSync(path.join(root, 'tree', rel)).equals(tree[rel]!)).toBe(true);
    }
    await rclone('copy', 'X:bkt/tree', back);
    const outCheck = await rclone('check', src, back);
    expect(outCheck.stderr).toContain('0 differences found');
    expect(outCheck.stderr).toContain('1001 matching files');
    // sync removes what the source no longer has
    rmSync(path.join(src, 'd0'), { recursive: true });
    await rclone('sync', src, 'X:bkt/tree');
    const after = await rclone('check', src, 'X:bkt/tree');
    expect(after.stderr).toContain('0 differences found');
  }, 300_000);

  it('copies one 1 GiB file in (multipart) and out: rclone check --download is clean, SHA-256 equal on disk and back', async () => {
    const bigSrc = mkdtempSync(path.join(os.tmpdir(), 'atrium-rclone-s3-big-'));
    const bigBack = mkdtempSync(path.join(os.tmpdir(), 'atrium-rclone-s3-big-back-'));
    const long = (...args: string[]) => run('rclone', [...args, '--transfers', '4'], { env, maxBuffer: 16 << 20, timeout: 600_000 });
    try {
      await writeBigFile(path.join(bigSrc, 'one-gib.bin'), 1 << 30);
      const want = await sha256Of(path.join(bigSrc, 'one-gib.bin'));
      await long('copy', bigSrc, 'X:bkt/big');
      expect(await sha256Of(path.join(root, 'big', 'one-gib.bin'))).toBe(want);
      // No staged part is left once the upload completed.
      expect(readdirSync(path.join(s.core.config.temp_dir, 's3-multipart'))).toEqual([]);
      // --download compares the bytes themselves (a multipart ETag is no MD5).
      const inCheck = await long('check', '--download', bigSrc, 'X:bkt/big');
      expect(inCheck.stderr).toContain('0 differences found');
      expect(inCheck.stderr).toContain('1 matching file');
      await long('copy', 'X:bkt/big', bigBack);
      expect(await sha256Of(path.join(bigBack, 'one-gib.bin'))).toBe(want);
      const outCheck = await long('check', bigSrc, bigBack);
      expect(outCheck.stderr).toContain('0 differences found');
    } finally {
      for (const d of [bigSrc, bigBack]) rmSync(d, { recursive: true, force: true });
    }
  }, 900_000);
});
