import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ONE_BACKEND } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { chownSeeded, type FtpPeer, missingPrograms, notRoot, type SshdPeer, startPureFtpd, startSshd } from './peers.js';
import { BUCKET, S3_KEY, type S3Peer, startS3rver } from './s3-peer.js';

const skip = missingPrograms('driver reconnection tests', 'sshd', 'pure-ftpd') ?? notRoot('driver reconnection tests');

describe.skipIf(skip !== undefined).each(ONE_BACKEND)('remote storages that lose their peer, on $name', (backend) => {
  let s: TestServer;
  let token: string;
  let sshd: SshdPeer;
  let ftpd: FtpPeer;
  let s3: S3Peer;

  beforeAll(async () => {
    [sshd, ftpd, s3] = await Promise.all([startSshd(), startPureFtpd(), startS3rver()]);
    for (const [peer, user] of [[sshd, 'nobody'], [ftpd, 'nobody']] as const) {
      const tree = { '/hello.txt': 'hello' };
      makeTree(tree, path.join(peer.files, 'root'));
      chownSeeded(user, path.join(peer.files, 'root'), tree);
    }
    await s3.put('root/hello.txt', 'hello');
    s = await startServer(backend);
    token = await s.login();
    const create = async (body: Record<string, unknown>) => expect((await s.api('POST', '/api/admin/storage/create', { token, body })).code).toBe(200);
    await create(localStorage('/local', makeTree({ 'local.txt': 'local' })));
    await create({ mount_path: '/sftp', driver: 'SFTP', addition: JSON.stringify({ address: `127.0.0.1:${sshd.port}`, username: sshd.user, private_key: sshd.privateKey, root_folder_path: path.join(sshd.files, 'root') }) });
    await create({ mount_path: '/ftp', driver: 'FTP', addition: JSON.stringify({ address: `127.0.0.1:${ftpd.port}`, username: ftpd.user, password: ftpd.password, root_folder_path: '/root' }) });
    await create({
      mount_path: '/s3',
      driver: 'S3',
      addition: JSON.stringify({ endpoint: `http://127.0.0.1:${s3.port}`, bucket: BUCKET, access_key_id: S3_KEY, secret_access_key: S3_KEY, force_path_style: true, root_folder_path: '/root' }),
    });
  }, 120_000);
  afterAll(async () => {
    await s?.destroy();
    await Promise.all([sshd?.destroy(), ftpd?.destroy(), s3?.destroy()]);
  });

  const names = async (p: string) => {
    const r = await s.api('POST', '/api/fs/list', { token, body: { path: p, refresh: true } });
    // (`ro` is the read-only folder the sshd and pure-ftpd peers always have.)
    return r.code === 200 ? (r.data.content ?? []).map((o: { name: string }) => o.name).filter((n: string) => n !== 'ro') : r.message;
  };
  const statuses = async () => {
    const r = await s.api('GET', '/api/admin/storage/list', { token });
    return Object.fromEntries(r.data.content.map((x: { mount_path: string; status: string }) => [x.mount_path, x.status]));
  };

  it('reconnects after the peer dropped every connection and came back', async () => {
    for (const p of ['/sftp', '/ftp', '/s3']) expect(await names(p)).toEqual(['hello.txt']);
    await Promise.all([sshd.stop(), ftpd.stop(), s3.stop()]);
    for (const p of ['/sftp', '/ftp', '/s3']) expect(await names(p)).toMatch(/failed get objs/);
    await Promise.all([sshd.start(), ftpd.start(), s3.start()]);
    for (const p of ['/sftp', '/ftp', '/s3']) expect(await names(p)).toEqual(['hello.txt']);
    expect(Object.values(await statuses()).every((st) => st === 'work')).toBe(true);
  });

  it('starts with the peers down: those storages get an error status, the others work, a reload brings them back', async () => {
    await Promise.all([sshd.stop(), ftpd.stop(), s3.stop()]);
    // The peers refuse connections at once, so the start is not held up (within the test's timeout).
    s = await s.restart();
    token = await s.login();
    expect(await names('/local')).toEqual(['local.txt']);
    const down = await statuses();
    expect(down['/local']).toBe('work');
    for (const p of ['/sftp', '/ftp', '/s3']) expect(down[p]).toMatch(/^failed init storage: /);
    expect(await names('/sftp')).toMatch(/storage not init: failed init storage/);
    expect(await names('/')).toEqual(['ftp', 'local', 's3', 'sftp']);

    await Promise.all([sshd.start(), ftpd.start(), s3.start()]);
    expect((await s.api('POST', '/api/admin/storage/load_all', { token })).code).toBe(200);
    await s.core.storages.ready();
    expect(Object.values(await statuses()).every((st) => st === 'work')).toBe(true);
    for (const p of ['/sftp', '/ftp', '/s3']) expect(await names(p)).toEqual(['hello.txt']);
  });
});
