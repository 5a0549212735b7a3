import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { driverConformance, ODD_NAMES } from './conformance.js';
import { download, mount, names, storageRow } from './mount.js';
import { readHostFile } from './peer-files.js';
import { chownSeeded, missingPrograms, notRoot, type SambaPeer, startSamba } from './peers.js';

const NO_SAMBA = missingPrograms('SMB driver against Samba', 'smbd', 'pdbedit') ?? notRoot('SMB driver against Samba');

const additionOf = (peer: SambaPeer, root = '/root') => ({ address: `127.0.0.1:${peer.port}`, username: peer.user, password: peer.password, share_name: peer.share, root_folder_path: root });

driverConformance(
  'SMB against Samba (ntlm auth = ntlmv2-only, its default)',
  async () => {
    const peer = await startSamba();
    const root = path.join(peer.files, 'root');
    return {
      storage: { driver: 'SMB', addition: additionOf(peer) },
      // SMB names can not hold \ / : * ? " < > | (MS-FSCC 2.1.5.2): those are refused with a message, tested below.
      caps: { names: ODD_NAMES.filter((n) => !/[\\/:*?"<>|]/.test(n)) },
      seed: async (tree) => {
        makeTree(tree, root);
        chownSeeded(peer.user, root, tree);
      },
      peerRead: async (rel) => readHostFile(root, rel),
      readOnly: { addition: additionOf(peer), dir: '/ro' },
      outsideMarker: 'outside-marker.txt',
      teardown: () => peer.destroy(),
    };
  },
  NO_SAMBA,
);

describe.skipIf(NO_SAMBA !== undefined)('SMB driver', () => {
  let s: TestServer;
  let admin: string;
  let peer: SambaPeer;
  const body = randomBytes(300_000);
  beforeAll(async () => {
    peer = await startSamba();
    makeTree({ 'data/file.bin': body }, path.join(peer.files, 'root'));
    chownSeeded(peer.user, path.join(peer.files, 'root'), { '/data/file.bin': '' });
    s = await startServer(BACKENDS[0]!);
    admin = await s.login();
    await mount(s, admin, '/smb', 'SMB', additionOf(peer, '/root/data'));
  }, 60_000);
  afterAll(async () => {
    await s?.destroy();
    await peer?.destroy();
  });

  it('reads ranges with READs at their offsets', async () => {
    for (const [a, b] of [[0, 0], [65535, 65537], [100_000, 299_999], [299_999, 299_999]] as const) {
      const r = await download(s, '/smb/file.bin', `bytes=${a}-${b}`);
      expect(r.status).toBe(206);
      expect(r.body.equals(body.subarray(a, b + 1)), `${a}-${b}`).toBe(true);
    }
  });

  it('refuses names SMB does not allow, with a message', async () => {
    const up = await s.inject({ method: 'PUT', url: '/api/fs/put', payload: 'q', headers: { authorization: admin, 'file-path': encodeURIComponent('/smb/what?.txt'), 'content-type': 'text/plain' } });
    expect(up.json().message).toMatch(/not allowed on SMB shares/);
    expect(await names(s, admin, '/smb')).toEqual(['file.bin']);
  });

  it('a wrong password or share is the storage\'s status', async () => {
    const bad = await s.api('POST', '/api/admin/storage/create', { token: admin, body: storageRow('/bad', 'SMB', { ...additionOf(peer), password: 'wrong' }) });
    expect(bad.message).toMatch(/STATUS_LOGON_FAILURE/);
    const share = await s.api('POST', '/api/admin/storage/create', { token: admin, body: storageRow('/noshare', 'SMB', { ...additionOf(peer), share_name: 'nope' }) });
    expect(share.message).toMatch(/STATUS_BAD_NETWORK_NAME/);
  });

  it('connects again after the server restarted', async () => {
    expect(await names(s, admin, '/smb')).toEqual(['file.bin']);
    await peer.stop();
    const down = await s.api('POST', '/api/fs/list', { token: admin, body: { path: '/smb', refresh: true } });
    expect(down.code).toBe(500);
    await peer.start();
    expect(await names(s, admin, '/smb')).toEqual(['file.bin']);
    expect((await download(s, '/smb/file.bin')).body.equals(body)).toBe(true);
  }, 60_000);

  it('is listed by the driver endpoints under OpenList\'s name and items', async () => {
    const info = await s.api('GET', '/api/admin/driver/info?driver=SMB', { token: admin });
    expect(info.data.additional.map((i: { name: string }) => i.name)).toEqual(['root_folder_path', 'address', 'username', 'password', 'share_name']);
    expect(info.data.additional[0]).toMatchObject({ default: '.', required: true });
    expect(info.data.config).toMatchObject({ name: 'SMB', only_proxy: true, no_cache: true });
  });
});
