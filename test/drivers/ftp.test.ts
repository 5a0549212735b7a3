import path from 'node:path';
import { makeTree } from '../helpers/files.js';
import { driverConformance } from './conformance.js';
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
