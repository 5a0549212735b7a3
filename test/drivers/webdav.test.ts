import { rmSync } from 'node:fs';
import path from 'node:path';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { freePort } from '../helpers/process.js';
import { ADMIN_PASSWORD, startServer } from '../helpers/server.js';
import { driverConformance } from './conformance.js';
import { readHostFile } from './peer-files.js';
import { missingPrograms, scratch, startRcloneServe } from './peers.js';

driverConformance(
  'WebDav against rclone serve webdav',
  async () => {
    const files = scratch('webdav-files');
    const root = path.join(files, 'root');
    makeTree({ 'root/': '', 'outside-marker.txt': 'outside' }, files);
    // rclone's WebDAV server stats every entry of a PROPFIND again: without a directory cache a
    // listing of 1000 files takes a minute. Seeds wait until its 2 s cache has expired.
    const peer = await startRcloneServe('webdav', files, ['--user', 'dav', '--pass', 'dav pass'], '2s');
    // (A --read-only rclone answers a refused PUT with 404, so the permission case runs against /dav below.)
    return {
      storage: { driver: 'WebDav', addition: { address: `http://127.0.0.1:${peer.port}`, username: 'dav', password: 'dav pass', root_folder_path: '/root' } },
      seed: async (tree) => {
        makeTree(tree, root);
        await new Promise((r) => setTimeout(r, 2100));
      },
      peerRead: async (rel) => readHostFile(root, rel),
      outsideMarker: 'outside-marker.txt',
      teardown: async () => {
        await peer.destroy();
        rmSync(files, { recursive: true, force: true });
      },
    };
  },
  missingPrograms('WebDav driver against rclone', 'rclone'),
);

// Atrium's own WebDAV server (/dav of a second instance, a Local storage at /peer) as the peer; a
// user with the WebDAV read permission only is refused every write.
driverConformance("WebDav against Atrium's own /dav", async () => {
  const files = scratch('dav-files');
  const root = path.join(files, 'root');
  makeTree({ 'root/ro/locked.txt': 'locked', 'outside-marker.txt': 'outside' }, files);
  const peer = await startServer(BACKENDS[0]!);
  const token = await peer.login();
  const ok = (r: { code: number; message: string }) => {
    if (r.code !== 200) throw new Error(r.message);
  };
  ok(await peer.api('POST', '/api/admin/storage/create', { token, body: localStorage('/peer', files) }));
  ok(await peer.api('POST', '/api/admin/user/create', { token, body: { username: 'reader', password: 'reader pw', base_path: '/', role: 0, permission: 256 } }));
  const port = await freePort();
  await peer.app.listen({ port, host: '127.0.0.1' });
  const addition = (username: string, password: string) => ({ address: `http://127.0.0.1:${port}/dav`, username, password, root_folder_path: '/peer/root' });
  return {
    storage: { driver: 'WebDav', addition: addition('admin', ADMIN_PASSWORD) },
    seed: async (tree) => void makeTree(tree, root),
    peerRead: async (rel) => readHostFile(root, rel),
    readOnly: { addition: addition('reader', 'reader pw'), dir: '/ro' },
    outsideMarker: 'outside-marker.txt',
    teardown: async () => {
      await peer.destroy();
      rmSync(files, { recursive: true, force: true });
    },
  };
});
