import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { expectClean, rclone, remoteEnv } from '../helpers/rclone.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { BUCKET, resolveS3Localhost, S3_KEY, type S3Peer, startS3rver } from '../drivers/s3-peer.js';
import { chownSeeded, missingPrograms, notRoot, type SshdPeer, startSshd } from '../drivers/peers.js';
import { filesBelow } from './files.js';

resolveS3Localhost();

/** `n` small files in 50 folders, each with its own bytes. */
const tree = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`d${i % 50}/file-${i}.txt`, `file ${i} ${'x'.repeat(i % 300)}\n`]));
/** rclone's S3 remote on s3rver (plain HTTP: no CA bundle the host may name applies). */
const S3_ENV = (port: number) => withoutCaBundle(remoteEnv({ TYPE: 's3', PROVIDER: 'Other', ACCESS_KEY_ID: S3_KEY, SECRET_ACCESS_KEY: S3_KEY, ENDPOINT: `http://127.0.0.1:${port}`, FORCE_PATH_STYLE: 'true', LIST_VERSION: '1', REGION: 'us-east-1' }));
const withoutCaBundle = (env: NodeJS.ProcessEnv) => Object.fromEntries(Object.entries(env).filter(([k]) => k !== 'AWS_CA_BUNDLE'));
const s3Addition = (peer: S3Peer, root: string) => ({ bucket: BUCKET, endpoint: `http://127.0.0.1:${peer.port}`, access_key_id: S3_KEY, secret_access_key: S3_KEY, root_folder_path: root, region: 'us-east-1', force_path_style: true, list_object_version: 'v1' });

/**
 * Sync jobs against real peers: Local → S3 (s3rver), Local → SFTP (OpenSSH sshd) and S3 → Local
 * with many files. Each: the first run copies all, a no-change run copies nothing, change 10 and
 * delete 5 → sync copies 10 and deletes 5, copy copies 10 and deletes none, and `rclone check`
 * agrees with what the destination holds.
 */
describe('sync jobs against S3 and SFTP peers', () => {
  const backend = BACKENDS[0]!;
  let s: TestServer;
  let admin: string;
  let peer: S3Peer;
  let src: string;
  const api = (url: string, body?: unknown, query?: Record<string, string>) => s.api(body === undefined ? 'GET' : 'POST', url, { token: admin, body, query });
  const create = async (job: Record<string, unknown>) => {
    const r = await api('/api/admin/sync/create', job);
    expect(r.code, r.message).toBe(200);
    return r.data.id as number;
  };
  const run = async (id: number) => {
    const r = await api('/api/admin/sync/run', {}, { id: String(id) });
    expect(r.code, r.message).toBe(200);
    await s.core.tasks.get(r.data.task.id)!.done;
    const last = (await api('/api/admin/sync/get', undefined, { id: String(id) })).data.reports[0];
    expect(last.report.failures, JSON.stringify(last.report.failures.slice(0, 3))).toEqual([]);
    expect(last.state, last.error).toBe('succeeded');
    return last.report;
  };
  const storage = async (body: Record<string, unknown>) => expect((await api('/api/admin/storage/create', body)).code).toBe(200);

  /** The scenario every peer runs: all, nothing, 10 changed and 5 deleted by sync then copy; rclone check after each. */
  async function scenario(dstMount: string, n: number, check: (dstRel: string) => Promise<{ stderr: string }>) {
    const syncJob = await create({ name: `sync${dstMount.replace('/', ' ')}`, src: '/src', dst: `${dstMount}/mirror`, mode: 'sync', options: { transfers: 8 } });
    const copyJob = await create({ name: `copy${dstMount.replace('/', ' ')}`, src: '/src', dst: `${dstMount}/backup`, mode: 'copy', options: { transfers: 8 } });
    const first = await run(syncJob);
    expect(first.copied.files).toBe(n);
    expect((await run(copyJob)).copied.files).toBe(n);
    expectClean(await check('mirror'), `${n} matching files`);
    const again = await run(syncJob);
    expect([again.copied.files, again.updated.files, again.deleted.files, again.skipped.files]).toEqual([0, 0, 0, n]);
    const names = filesBelow(src);
    const changed = names.slice(0, 10);
    const deleted = names.slice(10, 15);
    for (const rel of changed) writeFileSync(path.join(src, rel), `changed: ${rel} ${dstMount}\n`);
    for (const rel of deleted) rmSync(path.join(src, rel));
    const third = await run(syncJob);
    expect([third.copied.files, third.updated.files, third.deleted.files]).toEqual([0, 10, 5]);
    const copied = await run(copyJob);
    expect([copied.copied.files, copied.updated.files, copied.deleted.files]).toEqual([0, 10, 0]);
    expectClean(await check('mirror'), `${n - 5} matching files`);
    // The copy keeps the 5 the source lost: rclone finds them only in the destination.
    const backup = await check('backup').catch((err: { stderr: string }) => err);
    expect(backup.stderr).toContain('5 files missing');
    expect(backup.stderr).toContain(`${n - 5} matching files`);
  }

  beforeAll(async () => {
    s = await startServer(backend);
    admin = await s.login();
    peer = await startS3rver();
  });
  afterAll(async () => {
    await s?.destroy();
    await peer?.destroy();
    if (src) rmSync(src, { recursive: true, force: true });
  });

  it('Local → S3 (s3rver)', async () => {
    src = makeTree(tree(300));
    await storage(localStorage('/src', src));
    await storage({ mount_path: '/s3', driver: 'S3', addition: JSON.stringify(s3Addition(peer, '/l2s')) });
    // The S3 driver marks the folders it makes with `.placeholder` objects (OpenList's convention): not the job's files.
    await scenario('/s3', 300, (rel) => rclone(S3_ENV(peer.port), ['check', src, `X:${BUCKET}/l2s/${rel}`, '--exclude', '**/.placeholder', '--exclude', '.placeholder'], 120_000));
  }, 240_000);

  let sshd: SshdPeer | undefined;
  const noSshd = missingPrograms('sync to SFTP', 'sshd', 'ssh-keygen') ?? notRoot('sync to SFTP');
  it.skipIf(noSshd !== undefined)('Local → SFTP (OpenSSH sshd)', async () => {
    sshd = await startSshd();
    const root = path.join(sshd.files, 'root', 'sync');
    mkdirSync(root, { recursive: true });
    chownSeeded(sshd.user, path.join(sshd.files, 'root'), { 'sync/': '' });
    rmSync(src, { recursive: true, force: true });
    src = makeTree(tree(200));
    await api('/api/admin/storage/delete', {}, { id: String((await api('/api/admin/storage/list', undefined, {})).data.content.find((x: { mount_path: string }) => x.mount_path === '/src').id) });
    await storage(localStorage('/src', src));
    await storage({ mount_path: '/sftp', driver: 'SFTP', addition: JSON.stringify({ address: `127.0.0.1:${sshd.port}`, username: sshd.user, private_key: sshd.privateKey, root_folder_path: root }) });
    await scenario('/sftp', 200, (rel) => rclone(remoteEnv({ TYPE: 'local' }), ['check', src, path.join(root, rel)], 120_000));
    await sshd.destroy();
  }, 240_000);

  // The 10 000 files take about 7 minutes here (s3rver stores each object as files of its own):
  // ATRIUM_SYNC_MANY=10000 runs them (passed: docs/sync-and-trash.md); the suite runs 2 000.
  const MANY = Number(process.env.ATRIUM_SYNC_MANY ?? 2_000);
  it(`S3 → Local with ${MANY} files: all, then nothing, then 10 changed and 5 deleted`, async () => {
    const many = tree(MANY);
    const entries = Object.entries(many);
    for (let i = 0; i < entries.length; i += 64) await Promise.all(entries.slice(i, i + 64).map(([k, v]) => peer.put(`many/${k}`, v)));
    await storage({ mount_path: '/s3many', driver: 'S3', addition: JSON.stringify(s3Addition(peer, '/many')) });
    const dst = makeTree({});
    await storage(localStorage('/local', dst));
    const job = await create({ name: 'from s3', src: '/s3many', dst: '/local/many', mode: 'sync', options: { transfers: 16 } });
    const t0 = Date.now();
    expect((await run(job)).copied.files).toBe(MANY);
    const firstMs = Date.now() - t0;
    const t1 = Date.now();
    const again = await run(job);
    const secondMs = Date.now() - t1;
    expect([again.copied.files, again.updated.files, again.deleted.files, again.skipped.files]).toEqual([0, 0, 0, MANY]);
    console.log(`S3 → Local, ${MANY} files: first run ${firstMs} ms, no-change run ${secondMs} ms`);
    // The same job's two runs compared in one test (the issue: under a fifth of the first run's time).
    expect(secondMs).toBeLessThan(firstMs / 5);
    const keys = entries.map(([k]) => k);
    for (const k of keys.slice(0, 10)) await peer.put(`many/${k}`, `changed ${k}\n`);
    await peer.sdk.send(new (await import('@aws-sdk/client-s3')).DeleteObjectsCommand({ Bucket: BUCKET, Delete: { Objects: keys.slice(10, 15).map((k) => ({ Key: `many/${k}` })) } }));
    const third = await run(job);
    expect([third.copied.files, third.updated.files, third.deleted.files]).toEqual([0, 10, 5]);
    expectClean(await rclone(S3_ENV(peer.port), ['check', `X:${BUCKET}/many`, path.join(dst, 'many')], 300_000), `${MANY - 5} matching files`);
    rmSync(dst, { recursive: true, force: true });
  }, 900_000);
});
