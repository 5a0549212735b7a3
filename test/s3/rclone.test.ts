import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProtocolListener } from '../../src/protocols/listeners.js';
import { expectClean, type RcloneRig, rclone as runRclone, remoteEnv, sourceTree, startRcloneRig } from '../helpers/rclone.js';
import { requireProgram } from '../webdav/dav-helpers.js';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { client, KEY_ID, SECRET, startS3 } from './s3-helpers.js';

const present = requireProgram('rclone', "the rclone s3 backend's round trip");

/** The round trip's tree, plus one file above rclone's multipart cutoff. */
function s3Tree(): Record<string, Buffer> {
  return { ...sourceTree(), 'large/multipart.bin': randomBytes(12 * 1024 * 1024) };
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
  let rig: RcloneRig;
  let listener: ProtocolListener;
  let env: NodeJS.ProcessEnv;
  let endpoint: string;
  const tree = s3Tree();

  beforeAll(async () => {
    rig = await startRcloneRig(tree, 'atrium-rclone-s3-back');
    ({ listener, endpoint } = await startS3(rig.s, [{ name: 'bkt', path: '/disk' }]));
    // The AWS SDK inside rclone reads AWS_* variables (a CA bundle, a profile): none from the host.
    const host = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_')));
    env = remoteEnv(
      {
        TYPE: 's3',
        PROVIDER: 'Other',
        ENDPOINT: endpoint,
        ACCESS_KEY_ID: KEY_ID,
        SECRET_ACCESS_KEY: SECRET,
        FORCE_PATH_STYLE: 'true',
        // Above 5 MiB rclone uploads in parts: the big file goes through multipart.
        UPLOAD_CUTOFF: '5M',
        CHUNK_SIZE: '5M',
      },
      host,
    );
  });
  afterAll(async () => {
    await listener?.close();
    await rig?.close();
  });

  const rclone = (...args: string[]) => runRclone(env, [...args, '--transfers', '8', '--checkers', '8'], 200_000);

  it('copies 1 001 files in and out; rclone check is clean both ways', async () => {
    const { root, src, back } = rig;
    await rclone('copy', src, 'X:bkt/tree');
    expectClean(await rclone('check', src, 'X:bkt/tree'), '1001 matching files');
    const names = Object.keys(tree);
    for (const rel of [names[0]!, names[513]!, names[999]!, 'large/multipart.bin']) {
      expect(readFileSync(path.join(root, 'tree', rel)).equals(tree[rel]!)).toBe(true);
    }
    await rclone('copy', 'X:bkt/tree', back);
    expectClean(await rclone('check', src, back), '1001 matching files');
    // sync removes what the source no longer has
    rmSync(path.join(src, 'd0'), { recursive: true });
    await rclone('sync', src, 'X:bkt/tree');
    expectClean(await rclone('check', src, 'X:bkt/tree'));
  }, 300_000);

  it('a second sync of an unchanged tree copies nothing, without flags: ETags are MD5s and x-amz-meta-mtime keeps its nanoseconds', async () => {
    const src = mkdtempSync(path.join(os.tmpdir(), 'atrium-rclone-s3-resync-'));
    const md5s: Record<string, string> = {};
    try {
      mkdirSync(path.join(src, 'sub'));
      for (let i = 0; i < 40; i++) {
        const rel = i % 2 ? `sub/f${i}.bin` : `f${i}.bin`;
        const data = randomBytes(i * 1000);
        writeFileSync(path.join(src, rel), data);
        md5s[rel] = createHash('md5').update(data).digest('hex');
        // Times finer than a millisecond, as file systems keep them.
        const t = 1_700_000_000 + i * 3600 + 0.123456;
        utimesSync(path.join(src, rel), t, t);
      }
      const first = await rclone('sync', src, 'X:bkt/resync', '-v', '--stats-one-line', '--stats', '1h');
      expect(first.stderr.match(/Copied \(new\)/g)?.length).toBe(40);
      // HeadObject answers the content's MD5 and the time as rclone sent it.
      const s3 = client(endpoint);
      const head = await s3.send(new HeadObjectCommand({ Bucket: 'bkt', Key: 'resync/sub/f1.bin' }));
      s3.destroy();
      expect(head.ETag).toBe(`"${md5s['sub/f1.bin']}"`);
      expect(head.Metadata?.mtime).toMatch(/^1700003600\.123456/);
      const second = await rclone('sync', src, 'X:bkt/resync', '-v', '--stats-one-line', '--stats', '1h');
      expect(second.stderr).not.toMatch(/Copied|Updated modification time/);
      expect(second.stderr).toMatch(/0 B \/ 0 B|Transferred:\s+0 \/ 0/);
      expectClean(await rclone('check', src, 'X:bkt/resync'), '40 matching files');
    } finally {
      rmSync(src, { recursive: true, force: true });
    }
  }, 300_000);

  it('copies one 1 GiB file in (multipart) and out: rclone check --download is clean, SHA-256 equal on disk and back', async () => {
    const bigSrc = mkdtempSync(path.join(os.tmpdir(), 'atrium-rclone-s3-big-'));
    const bigBack = mkdtempSync(path.join(os.tmpdir(), 'atrium-rclone-s3-big-back-'));
    const long = (...args: string[]) => runRclone(env, [...args, '--transfers', '4'], 600_000);
    try {
      await writeBigFile(path.join(bigSrc, 'one-gib.bin'), 1 << 30);
      const want = await sha256Of(path.join(bigSrc, 'one-gib.bin'));
      await long('copy', bigSrc, 'X:bkt/big');
      expect(await sha256Of(path.join(rig.root, 'big', 'one-gib.bin'))).toBe(want);
      // No staged part is left once the upload completed.
      expect(readdirSync(path.join(rig.s.core.config.temp_dir, 's3-multipart'))).toEqual([]);
      // --download compares the bytes themselves (a multipart ETag is no MD5).
      expectClean(await long('check', '--download', bigSrc, 'X:bkt/big'), '1 matching file');
      await long('copy', 'X:bkt/big', bigBack);
      expect(await sha256Of(path.join(bigBack, 'one-gib.bin'))).toBe(want);
      expectClean(await long('check', bigSrc, bigBack));
    } finally {
      for (const d of [bigSrc, bigBack]) rmSync(d, { recursive: true, force: true });
    }
  }, 900_000);
});
