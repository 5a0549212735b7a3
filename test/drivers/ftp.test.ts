import path from 'node:path';
import { Client } from 'basic-ftp';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { driverConformance } from './conformance.js';
import { mount, names } from './mount.js';
import { readHostFile } from './peer-files.js';
import { chownSeeded, missingPrograms, notRoot, startPureFtpd } from './peers.js';

driverConformance(
  'FTP against pure-ftpd',
  async () => {
    const peer = await startPureFtpd();
    const root = path.join(peer.files, 'root');
    const addition = { address: `127.0.0.1:${peer.port}`, username: peer.user, password: peer.password, encoding: '', root_folder_path: '/root' };
    return {
      storage: { driver: 'FTP', addition },
      seed: async (tree) => {
        makeTree(tree, root);
        chownSeeded('nobody', root, tree);
      },
      peerRead: async (rel) => readHostFile(root, rel),
      readOnly: { addition, dir: '/ro' },
      outsideMarker: 'outside-marker.txt',
      teardown: () => peer.destroy(),
    };
  },
  missingPrograms('FTP driver against pure-ftpd', 'pure-ftpd', 'pure-pw') ?? notRoot('FTP driver against pure-ftpd'),
);

describe.skipIf(Boolean(missingPrograms('FTP cwd_list against pure-ftpd', 'pure-ftpd', 'pure-pw') ?? notRoot('FTP cwd_list against pure-ftpd')))('FTP driver option cwd_list', () => {
  let peer: Awaited<ReturnType<typeof startPureFtpd>>;
  let s: TestServer;
  let admin: string;
  const tree = { 'shows/Season [1]/e01.mkv': 'one', 'shows/Season [1]/e02.mkv': 'two', 'shows/notes.txt': 'n' };

  beforeAll(async () => {
    peer = await startPureFtpd();
    const root = path.join(peer.files, 'root');
    makeTree(tree, root);
    chownSeeded('nobody', root, tree);
    s = await startServer(BACKENDS[0]!);
    admin = await s.login();
    // The test counts the listings a browse sends; background thumbnails of the listed videos would add their own reads.
    expect((await s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'thumb_prefetch', value: 'false' }] })).code).toBe(200);
    const addition = { address: `127.0.0.1:${peer.port}`, username: peer.user, password: peer.password, encoding: '', root_folder_path: '/root' };
    await mount(s, admin, '/byPath', 'FTP', addition);
    await mount(s, admin, '/byCwd', 'FTP', { ...addition, cwd_list: true });
  }, 60_000);
  afterAll(async () => {
    await s?.destroy();
    await peer?.destroy();
  });

  it('lists by path by default and after CWD when on, with the same entries', async () => {
    const cd = vi.spyOn(Client.prototype, 'cd');
    const list = vi.spyOn(Client.prototype, 'list');
    try {
      for (const mp of ['/byPath', '/byCwd']) {
        cd.mockClear();
        list.mockClear();
        expect(await names(s, admin, `${mp}/shows/Season [1]`)).toEqual(['e01.mkv', 'e02.mkv']);
        expect(await names(s, admin, `${mp}/shows`)).toEqual(['Season [1]', 'notes.txt']);
        const cds = cd.mock.calls.map((c) => c[0]);
        const lists = list.mock.calls.map((c) => c[0] ?? '');
        if (mp === '/byPath') {
          expect(cds).toEqual([]);
          expect(lists).toEqual(['/root/shows/Season [1]', '/root/shows']);
        } else {
          expect(cds).toEqual(['/root/shows/Season [1]', '/root/shows']);
          expect(lists).toEqual(['', '']);
        }
      }
    } finally {
      cd.mockRestore();
      list.mockRestore();
    }
  });

  it('is listed by driver info with OpenList\'s default', async () => {
    const info = await s.api('GET', '/api/admin/driver/info?driver=FTP', { token: admin });
    expect(info.data.additional.map((i: { name: string }) => i.name)).toEqual(['address', 'encoding', 'username', 'password', 'root_folder_path', 'cwd_list']);
    expect(info.data.additional.find((i: { name: string }) => i.name === 'cwd_list')).toMatchObject({ type: 'bool', default: 'false' });
  });
});
