// Every action on files and folders of one folder, listed once: the context menu and the
// selection bar both show this list, so a new action appears in both.
import { joinPath, type Obj, rawLink } from '../api';
import { t } from '../i18n';
import { navigate } from '../router';
import { can, settings } from '../state';
import { downloadArchive } from './archiveDownload';
import type { MenuItem } from './ContextMenu';
import { batchRename, copyText, moveOrCopy, recursiveMove, remove, rename } from './fileOps';
import { showQr } from './QrCode';
import { shareSelection } from '../shares/ShareDialog';
import { isTextFile, openEditor, TEXT_LIMIT } from './textFiles';

export interface ActionContext {
  dir: string;
  targets: Obj[];
  /** Called with true after a change, to reload the folder. */
  after: (changed: boolean) => void;
}

/** Downloads one file through a link with the download attribute (the server streams it). */
export function downloadFile(dir: string, o: Obj): void {
  const a = document.createElement('a');
  a.href = rawLink(joinPath(dir, o.name), o.sign);
  a.download = o.name;
  document.body.append(a);
  a.click();
  a.remove();
}

export const linkOf = (dir: string, o: Obj) => new URL(rawLink(joinPath(dir, o.name), o.sign), location.href).href;

export function fileActions({ dir, targets, after }: ActionContext): MenuItem[] {
  const one = targets.length === 1 ? targets[0] : undefined;
  const names = targets.map((o) => o.name);
  const files = targets.filter((o) => !o.is_dir);
  const items: MenuItem[] = [];
  const add = (when: unknown, item: MenuItem) => when && items.push(item);
  add(one, { id: 'open', label: t('open'), run: () => navigate(joinPath(dir, one!.name)) });
  add(one && isTextFile(one) && one.size <= TEXT_LIMIT && can(3), { id: 'edit', label: t('edit'), run: () => openEditor(joinPath(dir, one!.name)) });
  add(one && !one.is_dir, { id: 'download', label: t('download'), run: () => downloadFile(dir, one!) });
  add((one?.is_dir || targets.length > 1) && settings().package_download !== 'false', { id: 'download_zip', label: t('zip.download'), run: () => downloadArchive(dir, names) });
  add(one && can(4), { id: 'rename', label: t('rename'), run: () => rename(dir, one!).then(after) });
  add(targets.length > 1 && can(4), { id: 'batch_rename', label: t('batch_rename'), run: () => batchRename(dir, names).then(after) });
  add(can(5), { id: 'move', label: t('move'), run: () => moveOrCopy('move', dir, names).then(after) });
  add(can(6), { id: 'copy', label: t('copy'), run: () => moveOrCopy('copy', dir, names).then(after) });
  add(one?.is_dir && can(5), { id: 'recursive_move', label: t('rmove'), run: () => recursiveMove(dir, one!.name).then(after) });
  add(files.length === 1, { id: 'copy_link', label: t('copy_link'), run: () => copyText(linkOf(dir, files[0]!)) });
  add(files.length > 1, {
    id: 'copy_links',
    label: t('copy_links', { n: files.length }),
    run: () => copyText(files.map((o) => linkOf(dir, o)).join('\n'), t('copied_links', { n: files.length })),
  });
  add(can(14), { id: 'share', label: t('share'), run: () => shareSelection(dir, names) });
  add(files.length === 1 && one, { id: 'qr', label: t('qr'), run: () => showQr(files[0]!.name, linkOf(dir, files[0]!)) });
  add(can(7), { id: 'delete', label: t('delete'), danger: true, run: () => remove(dir, names).then(after) });
  return items;
}
