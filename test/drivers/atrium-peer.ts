import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { atrium, callApi, freePort, startServerProcess } from '../helpers/process.js';
import type { ConformanceTarget } from './conformance.js';
import { readHostFile, writeTree } from './peer-files.js';

export const PEER_PASSWORD = 'peer-admin-pass';

/** A second Atrium process (the CLI build) on its own data folder and port: the AList V3 / OpenList peer. */
export async function startAtriumPeer() {
  const data = mkdtempSync(path.join(os.tmpdir(), 'atrium-alist-peer-'));
  await atrium('admin', 'set', PEER_PASSWORD, '--data', data);
  const port = await freePort();
  const files = path.join(data, 'files');
  const peer = { data, port, files, process: await startServerProcess(data, port) };
  const login = await callApi(peer.process.base, 'POST', '/api/auth/login', { body: { username: 'admin', password: PEER_PASSWORD } });
  if (login.code !== 200) throw new Error(`peer login failed: ${login.message}`);
  return { ...peer, token: login.data.token as string };
}

/**
 * The conformance target of a driver that speaks the AList/OpenList API (AList V3, OpenList)
 * against a fresh peer: the admin writes under /root, a peer user without permissions is the
 * read-only case (the peer refuses its writes), and a marker beside /root must stay unreachable.
 */
export async function atriumPeerTarget(driver: string): Promise<ConformanceTarget> {
  const peer = await startAtriumPeer();
  const root = path.join(peer.files, 'root');
  mkdirSync(root);
  writeFileSync(path.join(peer.files, 'outside-marker.txt'), 'outside');
  const user = await callApi(peer.process.base, 'POST', '/api/admin/user/create', {
    token: peer.token,
    body: { username: 'reader', password: 'reader-pass', base_path: '/', role: 0, permission: 0, disabled: false },
  });
  if (user.code !== 200) throw new Error(`peer user: ${user.message}`);
  const addition = { url: peer.process.base, username: 'admin', password: PEER_PASSWORD, root_folder_path: '/root' };
  return {
    storage: { driver, addition },
    seed: async (tree) => writeTree(root, tree),
    peerRead: async (rel) => readHostFile(root, rel),
    readOnly: { addition: { ...addition, username: 'reader', password: 'reader-pass' }, dir: '/' },
    outsideMarker: 'outside-marker.txt',
    teardown: async () => {
      await peer.process.stop();
      rmSync(peer.data, { recursive: true, force: true });
    },
  };
}
