import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
const hasS3cmd = requireProgram('s3cmd', "s3cmd against the S3 server");
const hasRestic = requireProgram('restic', "restic's s3 backend against the S3 server");
/** No AWS_* variable of the host (a CA bundle, a profile) reaches the clients. */
const cleanEnv = () => Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_')));

describe.runIf(hasS3cmd || hasRestic)('S3 server with s3cmd and restic', () => {
  let s: TestServer;
  let listener: ProtocolListener;
  let endpoint: string;
  let root: string;
  let work: string;

  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!);
    const admin = await s.login();
    root = makeTree({ 'keep.txt': 'kept' });
    work = mkdtempSync(path.join(os.tmpdir(), 'atrium-s3-clients-'));
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/disk', root) })).code).toBe(200);
    ({ listener, endpoint } = await startS3(s, [{ name: 'bkt', path: '/disk' }]));
  });
  afterAll(async () => {
    await listener?.close();
    await s?.destroy();
    for (const d of [root, work]) if (d) rmSync(d, { recursive: true, force: true });
  });

  it.runIf(hasS3cmd)('s3cmd put, ls, get, del', async () => {
    const host = endpoint.replace('http://', '');
    const cfg = path.join(work, 's3cfg');
    writeFileSync(cfg, `[default]\naccess_key = ${KEY_ID}\nsecret_key = ${SECRET}\nhost_base = ${host}\nhost_bucket = ${host}\nuse_https = False\nsignature_v2 = False\nbucket_location = us-east-1\n`);
    const s3cmd = (...args: string[]) => run('s3cmd', ['-c', cfg, ...args], { env: cleanEnv(), timeout: 60_000 });
    const file = path.join(work, 'up.bin');
    const data = randomBytes(200_000);
    writeFileSync(file, data);
    await s3cmd('put', file, 's3://bkt/cmd/up.bin');
    expect(readFileSync(path.join(root, 'cmd/up.bin')).equals(data)).toBe(true);
    const ls = await s3cmd('ls', 's3://bkt/cmd/');
    expect(ls.stdout).toContain('s3://bkt/cmd/up.bin');
    const back = path.join(work, 'back.bin');
    await s3cmd('get', 's3://bkt/cmd/up.bin', back);
    expect(readFileSync(back).equals(data)).toBe(true);
    await s3cmd('del', 's3://bkt/cmd/up.bin');
    expect((await s3cmd('ls', 's3://bkt/cmd/')).stdout).not.toContain('up.bin');
  }, 120_000);

  it.runIf(hasRestic)('restic init, backup, check and restore', async () => {
    const env = { ...cleanEnv(), AWS_ACCESS_KEY_ID: KEY_ID, AWS_SECRET_ACCESS_KEY: SECRET, RESTIC_PASSWORD: 'restic pass', RESTIC_REPOSITORY: `s3:${endpoint}/bkt/restic-repo`, RESTIC_CACHE_DIR: path.join(work, 'cache') };
    const restic = (...args: string[]) => run('restic', args, { env, timeout: 120_000, maxBuffer: 16 << 20 });
    const src = makeTree({ 'a.txt': 'alpha', 'sub/b.bin': randomBytes(3 * 1024 * 1024), 'sub/c.txt': 'charlie' });
    try {
      await restic('init');
      await restic('backup', src);
      await restic('check');
      const target = path.join(work, 'restore');
      await restic('restore', 'latest', '--target', target);
      const restored = path.join(target, src);
      expect(readFileSync(path.join(restored, 'a.txt'), 'utf8')).toBe('alpha');
      expect(readFileSync(path.join(restored, 'sub/b.bin')).equals(readFileSync(path.join(src, 'sub/b.bin')))).toBe(true);
    } finally {
      rmSync(src, { recursive: true, force: true });
    }
  }, 240_000);
});
