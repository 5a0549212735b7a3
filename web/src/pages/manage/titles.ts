// The manage pages' names for the tab title (title.ts), by the path below /@manage/.
import { type MessageKey, t, tx } from '../../i18n';

const PAGES: Array<[prefix: string, key: MessageKey | string]> = [
  ['storages/add', 'm.add_storage'],
  ['storages/edit', 'm.edit_storage'],
  ['storages', 'm.storages'],
  ['users', 'm.users'],
  ['groups', 'm.groups'],
  ['metas', 'm.metas'],
  ['hooks', 'm.hooks'],
  ['sync', 'm.sync'],
  ['audit', 'm.audit'],
  ['indexes', 'm.index'],
  ['offline', 'm.offline_download'],
  ['backup', 'm.backup'],
  ['about', 'm.about'],
  ['settings/other', 'm.other'],
  ['tasks', 'm.tasks'],
  ['shares', 'share.mine'],
  ['profile', 'm.profile'],
];

/** The page's name for `sub` (the path below /@manage/), or undefined for an unknown page. */
export function manageTitle(sub: string): string | undefined {
  const hit = PAGES.find(([prefix]) => sub === prefix || sub.startsWith(`${prefix}/`));
  return hit ? (tx(hit[1]) ?? t('manage')) : undefined;
}
