// The manage area: settings groups, storages, users, metas, tasks, offline downloads, index
// (admins) and the profile (everyone logged in).
import { type Component, createEffect, createSignal, For, Match, Show, Switch } from 'solid-js';
import { href, linkClick, navigate } from '../../router';
import About from './About';
import Audit from './Audit';
import Backup from './Backup';
import OtherSettings from './OtherSettings';
import { manageTitle } from './titles';
import { setPageTitle } from '../../title';
import Groups from './Groups';
import Hooks from './Hooks';
import Indexes from './Indexes';
import Metas from './Metas';
import Offline from './Offline';
import Profile from './Profile';
import Settings from './Settings';
import SyncJobs from './SyncJobs';
import { StorageEdit, StorageList } from './Storages';
import Tasks from './Tasks';
import Users from './Users';
import MyShares from '../../shares/MyShares';
import { can } from '../../state';
import { type MessageKey, t } from '../../i18n';
import { pendingFromUrl } from '../../sso';

const SETTING_GROUPS: Array<[string, number, MessageKey]> = [
  ['site', 1, 'm.site'],
  ['style', 2, 'm.style'],
  ['preview', 3, 'm.preview'],
  ['global', 4, 'm.global'],
  ['offline', 5, 'm.offline_download'],
  ['sso', 7, 'm.single_sign_on'],
  ['ldap', 8, 'm.ldap'],
  ['s3', 9, 'm.s3'],
  ['ftp', 10, 'm.ftp'],
  ['traffic', 11, 'm.traffic'],
];

/** Admin pages without props, by their path below /@manage/. */
const MORE_PAGES = new Map<string, Component>([
  ['settings/other', OtherSettings],
  ['backup', Backup],
  ['about', About],
]);

export default function Manage(props: { path: string; admin: boolean }) {
  const sub = () => props.path.replace(/^\/@manage\/?/, '');
  if (sub() === '') navigate(props.admin && !pendingFromUrl('sso_id') ? '/@manage/settings/site' : '/@manage/profile', true);
  const link = (to: string, label: string) => (
    <a href={href(`/@manage/${to}`)} classList={{ active: sub() === to || sub().startsWith(`${to}/`) }} onClick={(e) => linkClick(e, `/@manage/${to}`)}>
      {label}
    </a>
  );
  const group = () => SETTING_GROUPS.find(([name]) => sub() === `settings/${name}`);
  createEffect(() => setPageTitle(group() ? t(group()![2]) : manageTitle(sub()), t('manage')));
  // at phone width the menu folds into one button; following a link folds it again
  const [menuOpen, setMenuOpen] = createSignal(false);
  return (
    <div class="manage">
      <button class="menu-toggle" aria-expanded={menuOpen()} aria-controls="manage-nav" onClick={() => setMenuOpen(!menuOpen())}>
        ☰ {t('manage')}
      </button>
      <nav class="side" id="manage-nav" aria-label="manage" classList={{ open: menuOpen() }} onClick={(e) => (e.target as HTMLElement).closest('a') && setMenuOpen(false)}>
        <Show when={props.admin}>
          <div class="group">{t('m.settings')}</div>
          <For each={SETTING_GROUPS}>{([name, , label]) => link(`settings/${name}`, t(label))}</For>
          {link('settings/other', t('m.other'))}
          <div class="group">{t('manage')}</div>
          {link('storages', t('m.storages'))}
          {link('users', t('m.users'))}
          {link('groups', t('m.groups'))}
          {link('metas', t('m.metas'))}
          {link('hooks', t('m.hooks'))}
          {link('sync', t('m.sync'))}
          {link('audit', t('m.audit'))}
          {link('indexes', t('m.index'))}
          {link('offline', t('m.offline_download'))}
          {link('backup', t('m.backup'))}
          {link('about', t('m.about'))}
        </Show>
        <div class="group">{t('m.account')}</div>
        {link('tasks', t('m.tasks'))}
        <Show when={can(14)}>{link('shares', t('share.mine'))}</Show>
        {link('profile', t('m.profile'))}
      </nav>
      <main class="manage-page">
        <section>
        <Switch fallback={<p class="muted">{t('not_found')}</p>}>
          <Match when={sub() === 'profile'}>
            <Profile />
          </Match>
          <Match when={sub() === 'shares'}>
            <MyShares />
          </Match>
          <Match when={sub() === 'tasks'}>
            <Tasks admin={props.admin} />
          </Match>
          <Match when={!props.admin}>
            <p class="error">{t('m.only_administrators_can_open_this_page')}</p>
          </Match>
          <Match when={group()} keyed>
            {(g) => <Settings group={g[1]} title={t(g[2])} />}
          </Match>
          <Match when={sub() === 'storages'}>
            <StorageList />
          </Match>
          <Match when={sub() === 'storages/add'}>
            <StorageEdit />
          </Match>
          <Match when={sub().match(/^storages\/edit\/(\d+)$/)} keyed>
            {(m) => <StorageEdit id={Number(m[1])} />}
          </Match>
          <Match when={sub() === 'users'}>
            <Users />
          </Match>
          <Match when={sub() === 'groups'}>
            <Groups />
          </Match>
          <Match when={sub() === 'metas'}>
            <Metas />
          </Match>
          <Match when={sub() === 'hooks'}>
            <Hooks />
          </Match>
          <Match when={sub() === 'sync'}>
            <SyncJobs />
          </Match>
          <Match when={sub() === 'audit'}>
            <Audit />
          </Match>
          <Match when={sub() === 'indexes'}>
            <Indexes />
          </Match>
          <Match when={sub() === 'offline'}>
            <Offline />
          </Match>
          <Match when={MORE_PAGES.get(sub())} keyed>
            {(Page) => <Page />}
          </Match>
        </Switch>
        </section>
      </main>
    </div>
  );
}
