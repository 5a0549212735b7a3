// What the rclone round trips share (test/s3/rclone.test.ts, test/webdav/rclone.test.ts): a source tree,
// a server with a local storage at /disk, rclone's remote X set up from the environment alone, and the check summary.
import { execFile } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import { BACKENDS } from './backends.js';
import { localStorage, makeTree } from './files.js';
import { startServer, type TestServer } from './server.js';

export const run = promisify(execFile);

/** 1 000 files in 20 folders (two levels), sizes 0 B – 64 KiB, names with spaces, # and non-ASCII. */
export function sourceTree(): Record<string, Buffer> {
  const tree: Record<string, Buffer> = {};
  for (let i = 0; i < 1000; i++) {
    const dir = `d${i % 10}/${i % 20 < 10 ? 'plain' : 'ü sub #2'}`;
    tree[`${dir}/file ${i}${i % 3 === 0 ? ' é' : ''}.bin`] = randomBytes(i % 97 === 0 ? 0 : randomInt(65536));
  }
  return tree;
}

export interface RcloneRig {
  s: TestServer;
  admin: string;
  /** The disk of the storage mounted at /disk. */
  root: string;
  /** The source tree on disk. */
  src: string;
  /** An empty folder to copy back into. */
  back: string;
  close(): Promise<void>;
}

/** A server whose local storage /disk is an empty folder, the source `tree` written out, and a folder `back` (named with `label`). */
export async function startRcloneRig(tree: Record<string, Buffer>, label: string): Promise<RcloneRig> {
  const s = await startServer(BACKENDS[0]!);
  const admin = await s.login();
  const root = makeTree({});
  const src = makeTree(tree);
  const back = mkdtempSync(path.join(os.tmpdir(), `${label}-`));
  expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/disk', root) })).code).toBe(200);
  return {
    s,
    admin,
    root,
    src,
    back,
    async close() {
      await s.destroy();
      for (const d of [root, src, back]) rmSync(d, { recursive: true, force: true });
    },
  };
}

/** The environment of an rclone whose remote X has `settings` (TYPE, URL, …) and no config file; the rest comes from `host`. */
export function remoteEnv(settings: Record<string, string>, host: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...host, RCLONE_CONFIG: '/dev/null', ...Object.fromEntries(Object.entries(settings).map(([k, v]) => [`RCLONE_CONFIG_X_${k}`, v])) };
}

/** Runs rclone; a non-zero exit rejects. */
export const rclone = (env: NodeJS.ProcessEnv, args: string[], timeout: number) => run('rclone', args, { env, maxBuffer: 16 << 20, timeout });

/** rclone check's summary (on stderr): no differences, and `matching` (e.g. '1000 matching files') when given. */
export function expectClean(check: { stderr: string }, matching?: string): void {
  expect(check.stderr).toContain('0 differences found');
  if (matching) expect(check.stderr).toContain(matching);
}
