import { Index } from 'solid-js';
import type { User } from '../../api';
import { type MessageKey, t } from '../../i18n';
import { bool, recordDialog } from './recordDialog';
import { RecordList } from './RecordList';

/** Labels of the permission bits, bit 0 first. */
export const PERMISSIONS: MessageKey[] = [
  'm.perm_see_hidden_files',
  'm.perm_access_without_password',
  'm.perm_add_offline_download',
  'm.perm_write_mkdir_upload',
  'm.perm_rename',
  'm.perm_move',
  'm.perm_copy',
  'm.perm_remove',
  'm.perm_webdav_read',
  'm.perm_webdav_manage',
  'm.perm_ftp_sftp_read',
  'm.perm_ftp_sftp_write',
  'm.perm_read_archives',
  'm.perm_decompress',
  'm.perm_share',
  'm.perm_custom_share_id',
];
const ROLES: MessageKey[] = ['m.role_general', 'm.role_guest', 'm.role_admin'];

export default function Users() {
  const edit = async (u?: User) => {
    const fields = [
      { name: 'username', type: 'string', required: true },
      { name: 'password', type: 'string', help: u ? t('m.leave_empty_to_keep_the_password') : undefined, required: !u },
      { name: 'base_path', type: 'string' },
      { name: 'disabled', type: 'bool' },
      { name: 'allow_ldap', type: 'bool' },
    ];
    const v = await recordDialog(u ? `${t('edit')} ${u.username}` : `${t('add')} user`, fields, {
      username: u?.username ?? '',
      password: '',
      base_path: u?.base_path ?? '/',
      disabled: String(u?.disabled ?? false),
      allow_ldap: String(u?.allow_ldap ?? true),
      permission: String(u?.permission ?? 0),
    }, (values, set) => (
      <fieldset class="perms">
        <legend>{t('m.permissions')}</legend>
        <div class="form-grid">
          <Index each={PERMISSIONS}>
            {(name, bit) => (
              <label>
                <input
                  type="checkbox"
                  checked={((Number(values.permission) >> bit) & 1) === 1}
                  onChange={(e) => set('permission', String(e.currentTarget.checked ? Number(values.permission) | (1 << bit) : Number(values.permission) & ~(1 << bit)))}
                />{' '}
                {t(name())}
              </label>
            )}
          </Index>
        </div>
      </fieldset>
    ));
    if (!v) return undefined;
    return { ...(u ?? {}), username: v.username, password: v.password, base_path: v.base_path, disabled: bool(v.disabled), allow_ldap: bool(v.allow_ldap), permission: Number(v.permission), role: u?.role ?? 0 };
  };
  return (
    <RecordList<User>
      title={t('m.users')}
      route="/admin/user"
      columns={[t('login.username'), t('m.base_path'), t('m.role'), t('m.status')]}
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
        </>
      )}
      name={(u) => u.username}
      edit={edit}
      buttons={(u, call) => (
        <button class="small" onClick={() => call(`/admin/user/cancel_2fa?id=${u.id}`)}>
          {t('m.cancel_2fa')}
        </button>
      )}
      canDelete={(u) => u.role === 0}
    />
  );
}
