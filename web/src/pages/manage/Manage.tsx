// The manage area: settings groups, storages, users, metas, tasks, offline downloads, index
// (admins) and the profile (everyone logged in).
import { For, Match, Show, Switch } from 'solid-js';
import { href, linkClick, navigate } from '../../router';
import Indexes from './Indexes';
import Metas from './Metas';
import Offline from './Offline';
import Profile from './Profile';
import Settings from './Settings';
import { StorageEdit, StorageList } from './Storages';
import Tasks from './Tasks';
import Users from './Users';

const SETTING_GROUPS: Array<[string, number, string]> = [
  ['site', 1, 'Site'],
  ['style', 2, 'Style'],
  ['preview', 3, 'Preview'],
  ['global', 4, 'Global'],
  ['offline', 5, 'Offline download'],
  ['sso', 7, 'Single sign-on'],
  ['ldap', 8, 'LDAP'],
  ['s3', 9, 'S3'],
];

export default function Manage(props: { path: string; admin: boolean }) {
  const sub = () => props.path.replace(/^\/@manage\/?/, '');
  if (sub() === '') navigate(props.admin ? '/@manage/settings/site' : '/@manage/profile', true);
  const link = (to: string, label: string) => (
    <a href={href(`/@manage/${to}`)} classList={{ active: sub() === to || sub().startsWith(`${to}/`) }} onClick={(e) => linkClick(e, `/@manage/${to}`)}>
      {label}
    </a>
  );
  const group = () => SETTING_GROUPS.find(([name]) => sub() === `settings/${name}`);
  return (
    <div class="manage">
      <nav class="side" aria-label="manage">
        <Show when={props.admin}>
          <div class="group">Settings</div>
          <For each={SETTING_GROUPS}>{([name, , label]) => link(`settings/${name}`, label)}</For>
          <div class="group">Manage</div>
          {link('storages', 'Storages')}
          {link('users', 'Users')}
          {link('metas', 'Metas')}
          {link('indexes', 'Index')}
          {link('offline', 'Offline download')}
        </Show>
        <div class="group">Account</div>
        {link('tasks', 'Tasks')}
        {link('profile', 'Profile')}
      </nav>
      <section>
        <Switch fallback={<p class="muted">Not found</p>}>
          <Match when={sub() === 'profile'}>
            <Profile />
          </Match>
          <Match when={sub() === 'tasks'}>
            <Tasks admin={props.admin} />
          </Match>
          <Match when={!props.admin}>
            <p class="error">Only administrators can open this page.</p>
          </Match>
          <Match when={group()} keyed>
            {(g) => <Settings group={g[1]} title={g[2]} />}
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
          <Match when={sub() === 'metas'}>
            <Metas />
          </Match>
          <Match when={sub() === 'indexes'}>
            <Indexes />
          </Match>
          <Match when={sub() === 'offline'}>
            <Offline />
          </Match>
        </Switch>
      </section>
    </div>
  );
}
