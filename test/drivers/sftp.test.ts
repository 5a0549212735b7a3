import path from 'node:path';
import { makeTree } from '../helpers/files.js';
import { driverConformance } from './conformance.js';
import { readHostFile } from './peer-files.js';
import { chownSeeded, missingPrograms, notRoot, scratch, startRcloneServe, startSshd } from './peers.js';

driverConformance(
  'SFTP against OpenSSH sshd (private key)',
  async () => {
    const peer = await startSshd();
    const root = path.join(peer.files, 'root');
    const addition = { address: `127.0.0.1:${peer.port}`, username: peer.user, private_key: peer.privateKey, root_folder_path: root };
    return {
      storage: { driver: 'SFTP', addition },
      seed: async (tree) => {
        makeTree(tree, root);
        chownSeeded(peer.user, root, tree);
      },
      peerRead: async (rel) => readHostFile(root, rel),
      readOnly: { addition, dir: '/ro' },
      outsideMarker: 'outside-marker.txt',
      teardown: () => peer.destroy(),
    };
  },
  missingPrograms('SFTP driver against OpenSSH', 'sshd', 'ssh-keygen') ?? notRoot('SFTP driver against OpenSSH'),
);

driverConformance(
  'SFTP against rclone serve sftp (password)',
  async () => {
    const files = scratch('sftp-files');
    const root = path.join(files, 'root');
    makeTree({ 'root/': '', 'outside-marker.txt': 'outside' }, files);
    const peer = await startRcloneServe('sftp', files, ['--user', 'alice', '--pass', 's3cret pw']);
    return {
      storage: { driver: 'SFTP', addition: { address: `127.0.0.1:${peer.port}`, username: 'alice', password: 's3cret pw', root_folder_path: '/root' } },
      seed: async (tree) => void makeTree(tree, root),
      peerRead: async (rel) => readHostFile(root, rel),
      outsideMarker: 'outside-marker.txt',
      teardown: async () => {
        await peer.destroy();
        await import('node:fs').then((fs) => fs.rmSync(files, { recursive: true, force: true }));
      },
    };
  },
  missingPrograms('SFTP driver against rclone', 'rclone', 'ssh-keygen'),
);
