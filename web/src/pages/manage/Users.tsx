// Users (admins): name, password, base path, own bits, groups, own roots, quota and limits; the
// rights and limits that apply with the groups (read-only); cancel 2FA; the user's sessions.
import { createResource, For, Show } from 'solid-js';
import { api, type Group, type User } from '../../api';
import { t, type MessageKey } from '../../i18n';
import { bool } from './recordDialog';
import { RecordList } from './RecordList';
import { limitBody, limitFields, limitsSummary, limitValues, permCount, PermissionBits, PermList, permNames, RootsEditor, rootsBody, validatedDialog } from './limits';
import { userSessions } from './Sessions';

export { PERMISSIONS } from './limits';

const ROLES: MessageKey[] = ['m.role_general', 'm.role_guest', 'm.role_admin'];

const loadGroups = () => api<{ content: Group[] | null }>('/admin/group/list?page=1&per_page=1000').then((r) => r.content ?? []);

/** The groups as checkboxes over the form value `group_ids` (ids joined by commas). */
function GroupPicker(props: { groups: Group[]; value: string; set: (v: string) => void }) {
  const chosen = () => new Set(props.value.split(',').filter(Boolean).map(Number));
  const toggle = (id: number, on: boolean) => {
    const s = chosen();
    if (on) s.add(id);
    else s.delete(id);
    props.set([...s].join(','));
  };
  return (
    <fieldset class="perms" data-testid="user-groups">
      <legend>{t('users.groups')}</legend>
      <div class="form-grid">
        <For each={props.groups} fallback={<p class="muted">{t('users.no_groups')}</p>}>
          {(g) => (
            <label>
              <input type="checkbox" name={`group-${g.id}`} checked={chosen().has(g.id)} onChange={(e) => toggle(g.id, e.currentTarget.checked)} /> {g.name}
            </label>
          )}
        </For>
      </div>
    </fieldset>
  );
}

/** What applies with the groups, as the server last computed it (read-only). */
function Effective(props: { user: User }) {
  return (
    <fieldset class="perms" data-testid="user-effective">
      <legend>{t('users.effective')}</legend>
      <p>
        <strong>{t('users.effective_permissions')}:</strong> <PermList bits={props.user.effective_permission} />
      </p>
      <p>
        <strong>{t('users.effective_limits')}:</strong> {limitsSummary(props.user.effective_limits)}
      </p>
    </fieldset>
  );
}

async function edit(u?: User): Promise<Record<string, unknown> | undefined> {
  const groups = await loadGroups().catch(() => [] as Group[]);
  const fields = [
    { name: 'username', type: 'string', required: true },
    { name: 'password', type: 'string', help: u ? t('m.leave_empty_to_keep_the_password') : undefined, required: !u },
    { name: 'base_path', type: 'string' },
    { name: 'disabled', type: 'bool' },
    { name: 'allow_ldap', type: 'bool' },
    ...limitFields(),
  ];
  const initial = {
    username: u?.username ?? '',
    password: '',
    base_path: u?.base_path ?? '/',
    disabled: String(u?.disabled ?? false),
    allow_ldap: String(u?.allow_ldap ?? true),
    permission: String(u?.permission ?? 0),
    group_ids: (u?.group_ids ?? []).join(','),
    roots: JSON.stringify(u?.roots ?? []),
    ...limitValues(u),
  };
  return validatedDialog(
    u ? `${t('edit')} ${u.username}` : t('users.add'),
    fields,
    initial,
    (values, set) => (
      <>
        <GroupPicker groups={groups} value={values.group_ids ?? ''} set={(v) => set('group_ids', v)} />
        <RootsEditor value={values.roots ?? '[]'} set={(v) => set('roots', v)} />
        <PermissionBits value={values.permission ?? '0'} set={(v) => set('permission', v)} />
        <Show when={u}>{(user) => <Effective user={user()} />}</Show>
      </>
    ),
    (v) => {
      const limits = limitBody(v);
      if (typeof limits === 'string') return limits;
      const roots = rootsBody(v.roots ?? '[]');
      if (typeof roots === 'string') return roots;
      return {
        ...(u ?? {}),
        username: v.username,
        password: v.password,
        base_path: v.base_path,
        disabled: bool(v.disabled),
        allow_ldap: bool(v.allow_ldap),
        permission: Number(v.permission),
        role: u?.role ?? 0,
        group_ids: (v.group_ids ?? '').split(',').filter(Boolean).map(Number),
        roots,
        ...limits,
      };
    },
  );
}

export default function Users() {
  const [groups] = createResource(() => loadGroups().catch(() => [] as Group[]));
  const groupNames = (u: User) => u.group_ids.map((id) => groups()?.find((g) => g.id === id)?.name ?? `#${id}`).join(', ');
  return (
    <RecordList<User>
      title={t('m.users')}
      route="/admin/user"
      columns={[t('login.username'), t('m.base_path'), t('m.role'), t('m.status'), t('users.groups'), t('users.effective_permissions'), t('users.effective_limits')]}
      cells={(u) => (
        <>
          <td>{u.username}</td>
          <td>{u.base_path}</td>
          <td>{ROLES[u.role] ? t(ROLES[u.role]!) : u.role}</td>
          <td>
            <span class="badge" classList={{ ok: !u.disabled, bad: u.disabled }}>
              {u.disabled ? t('m.disabled') : t('m.enabled')}
            </span>
          </td>
          <td data-testid="user-groups-cell">{groupNames(u) || '—'}</td>
          <td data-testid="user-effective-permission" title={permNames(u.effective_permission).join(', ')}>
            {permCount(u.effective_permission)}
          </td>
          <td data-testid="user-effective-limits">{limitsSummary(u.effective_limits)}</td>
        </>
      )}
      name={(u) => u.username}
      edit={edit}
      buttons={(u, call) => (
        <>
          <button class="small" data-action="user-sessions" onClick={() => void userSessions(u)}>
            {t('users.sessions')}
          </button>
          <button class="small" onClick={() => call(`/admin/user/cancel_2fa?id=${u.id}`)}>
            {t('m.cancel_2fa')}
          </button>
        </>
      )}
      canDelete={(u) => u.role === 0}
    />
  );
}
