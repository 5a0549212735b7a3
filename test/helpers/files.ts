import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Makes a folder tree: keys ending in '/' are folders, others files with the given content. */
export function makeTree(tree: Record<string, string | Buffer>, root = mkdtempSync(path.join(os.tmpdir(), 'atrium-tree-'))): string {
  for (const [rel, content] of Object.entries(tree)) {
    const full = path.join(root, rel);
    if (rel.endsWith('/')) mkdirSync(full, { recursive: true });
    else {
      mkdirSync(path.dirname(full), { recursive: true });
      writeFileSync(full, content);
    }
  }
  return root;
}

export function localStorage(mountPath: string, root: string, extra: Record<string, unknown> = {}, addition: Record<string, unknown> = {}) {
  return {
    mount_path: mountPath,
    driver: 'Local',
    order: 0,
    cache_expiration: 0,
    addition: JSON.stringify({ root_folder_path: root, show_hidden: true, ...addition }),
    order_by: 'name',
    order_direction: 'asc',
    extract_folder: 'front',
    webdav_policy: 'native_proxy',
    // Deletes remove the bytes: the suites check the disk after a delete. A Local storage's own
    // default (its trash on) is what test/trash/ tests, passing trash: ''.
    trash: 'off',
    ...extra,
  };
}
