import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makeTree } from '../helpers/files.js';
import { driverConformance } from './conformance.js';
import { readHostFile } from './peer-files.js';

// The Local driver proves the suite itself: its peer is a folder of this machine. (Tests run as
// root here, so the file system refuses nothing: the permission case is not run for Local.)
driverConformance('Local', async () => {
  const base = mkdtempSync(path.join(os.tmpdir(), 'atrium-conf-local-'));
  const root = path.join(base, 'root');
  mkdirSync(root);
  writeFileSync(path.join(base, 'outside-marker.txt'), 'outside');
  return {
    storage: { driver: 'Local', addition: { root_folder_path: root, show_hidden: true } },
    seed: async (tree) => void makeTree(tree, root),
    peerRead: async (rel) => readHostFile(root, rel),
    outsideMarker: 'outside-marker.txt',
    teardown: async () => rmSync(base, { recursive: true, force: true }),
  };
});
