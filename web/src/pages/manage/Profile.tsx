// The current user's account: name and password, two-factor authentication, single sign-on binding, passkeys, SSH keys, S3 access keys, app passwords.
import { createResource, createSignal, onMount, Show } from 'solid-js';
import { act } from '../../actions';
import { api } from '../../api';
import { confirmAction } from '../../components/Dialog';
import { formatDate } from '../../format';
import { t } from '../../i18n';
import { loadMe, me, notifyError, settings } from '../../state';
import { startSso, takeFromUrl } from '../../sso';
import Passkeys from './Passkeys';
import { DataTable, PageHead } from './Table';

interface SshKey {
  id: number;
  title: string;
  fingerprint: string;
  added_time: string;
  last_used_time: string;
}

interface S3Key {
  id: number;
  title: string;
  access_key_id: string;
  added_time: string;
  last_used_time: string;
}

interface AppPassword {
  id: number;
  name: string;
  added_time: string;
  /** Empty until first used. */
  last_used_time: string;
}

export default function Profile() {
  const [keys, { refetch }] = createResource(() => api<{ content: SshKey[] | null }>('/me/sshkey/list?page=1&per_page=100'));
  const [s3Keys, s3] = createResource(() => api<{ content: S3Key[] | null }>('/me/s3key/list'));
  const [newS3Key, setNewS3Key] = createSignal<{ access_key_id: string; secret_access_key: string } | undefined>();
  const [appPasswords, appPasswordsAction] = createResource(() => api<{ content: AppPassword[] }>('/me/app_password/list'));
  // The secret of the app password just created: the server sends it this once only.
  const [newSecret, setNewSecret] = createSignal<string | undefined>();
  const [otp, setOtp] = createSignal<{ qr: string; secret: string } | undefined>();
  const guarded = (fn: () => Promise<unknown>) => act(fn);
  // Binding: the provider's ticket goes to /me/update as sso_id; the server stores the identity it vouches for.
  const bindSso = (ticket: string) =>
    act(() => api('/me/update', { username: me()?.username ?? '', password: '', sso_id: ticket }), loadMe, t('m.sso_bound_done'));
  onMount(() => {
    const ticket = takeFromUrl('sso_id');
    if (ticket) void bindSso(ticket);
  });
  const form = (e: SubmitEvent) => {
    e.preventDefault();
    const el = e.currentTarget as HTMLFormElement;
    return { el, data: Object.fromEntries(new FormData(el)) as Record<string, string> };
  };
  return (
    <div>
      <PageHead title={t('m.profile')} />
      <form
        class="card"
        onSubmit={async (e) => {
          const { data } = form(e);
          if (await guarded(() => api('/me/update', { username: data.username, password: data.password, sso_id: me()?.sso_id ?? '' }))) await loadMe();
        }}
      >
        <label>
          {t('login.username')}
          <input name="username" value={me()?.username ?? ''} required />
        </label>
        <label>
          {t('m.new_password_empty_keeps_the_current_one')}
          <input name="password" type="password" autocomplete="new-password" />
        </label>
        <div class="actions">
          <button type="submit" class="primary">
            {t('save')}
          </button>
        </div>
      </form>

      <div class="card" style={{ 'margin-top': '16px' }}>
        <h2>{t('m.two_factor_authentication')}</h2>
        <Show
          when={!me()?.otp}
          fallback={<p>{t('m.2fa_is_on_for_this_account_an_administra')}</p>}
        >
          <Show
            when={otp()}
            fallback={<button onClick={() => api<{ qr: string; secret: string }>('/auth/2fa/generate', {}).then(setOtp, notifyError)}>{t('m.enable_2fa')}</button>}
          >
            {(o) => (
              <form
                onSubmit={async (e) => {
                  const { data } = form(e);
                  if (await guarded(() => api('/auth/2fa/verify', { code: data.code, secret: o().secret }))) {
                    setOtp(undefined);
                    await loadMe();
                  }
                }}
              >
                <p>{t('m.scan_the_code_with_an_authenticator_app_')}</p>
                <img src={o().qr} alt="2FA QR code" width="180" height="180" />
                <p class="muted">
                  {t('m.secret')}: <code>{o().secret}</code>
                </p>
                <label>
                  {t('login.otp')}
                  <input name="code" inputmode="numeric" maxlength="6" required />
                </label>
                <div class="actions">
                  <button type="submit" class="primary">
                    {t('m.verify')}
                  </button>
                </div>
              </form>
            )}
          </Show>
        </Show>
      </div>

      <Show when={settings().sso_login_enabled === 'true'}>
        <div class="card" style={{ 'margin-top': '16px' }} data-testid="sso">
          <h2>{t('m.sso')}</h2>
          <Show
            when={me()?.sso_id}
            fallback={
              <>
                <p>{t('m.sso_unbound')}</p>
                <button
                  name="sso-bind"
                  onClick={() => {
                    if (!startSso('get_sso_id', settings().sso_compatibility_mode === 'true', (v) => void bindSso(v), notifyError)) notifyError(t('login.sso_blocked'));
                  }}
                >
                  {t('m.sso_bind')}
                </button>
              </>
            }
          >
            <p>{t('m.sso_bound')}</p>
            <button
              name="sso-unbind"
              class="danger"
              onClick={async () =>
                (await confirmAction(t('m.sso_unbind'), t('m.sso_unbind_question'))) &&
                act(() => api('/me/update', { username: me()?.username ?? '', password: '', sso_id: '' }), loadMe, t('m.sso_unbound_done'))
              }
            >
              {t('m.sso_unbind')}
            </button>
          </Show>
        </div>
      </Show>

      <Show when={settings().webauthn_login_enabled === 'true'}>
        <Passkeys />
      </Show>

      <div class="card" style={{ 'margin-top': '16px' }} data-testid="ssh-keys">
        <h2>{t('m.ssh_keys')}</h2>
        <DataTable columns={[t('m.title'), t('m.fingerprint'), t('m.added'), t('m.last_used'), '']} rows={keys()?.content ?? []}>
              {(k) => (
          <tr>
            <td>{k.title}</td>
            <td>
              <code>{k.fingerprint}</code>
            </td>
            <td>{formatDate(k.added_time)}</td>
            <td>{formatDate(k.last_used_time)}</td>
            <td>
              <button
                class="small danger"
                onClick={async () => (await confirmAction(t('delete'), `${t('delete')} ${k.title}?`)) && (await guarded(() => api(`/me/sshkey/delete?id=${k.id}`, {}))) && refetch()}
              >
                {t('delete')}
              </button>
            </td>
          </tr>
              )}
        </DataTable>
        <form
          style={{ 'margin-top': '12px' }}
          onSubmit={async (e) => {
            const { el, data } = form(e);
            if (await guarded(() => api('/me/sshkey/add', { title: data.title, key: data.key }))) {
              el.reset();
              void refetch();
            }
          }}
        >
          <label>
            {t('m.title')}
            <input name="title" required />
          </label>
          <label>
            {t('m.public_key_an_authorized_keys_line')}
            <textarea name="key" required />
          </label>
          <div class="actions">
            <button type="submit">{t('add')}</button>
          </div>
        </form>
      </div>

      <div class="card" style={{ 'margin-top': '16px' }} data-testid="s3-keys">
        <h2>{t('m.s3_access_keys')}</h2>
        <DataTable columns={[t('m.title'), t('m.access_key_id'), t('m.added'), t('m.last_used'), '']} rows={s3Keys()?.content ?? []}>
          {(k) => (
            <tr>
              <td>{k.title}</td>
              <td>
                <code>{k.access_key_id}</code>
              </td>
              <td>{formatDate(k.added_time)}</td>
              <td>{formatDate(k.last_used_time)}</td>
              <td>
                <button
                  class="small danger"
                  onClick={async () => (await confirmAction(t('delete'), `${t('delete')} ${k.title}?`)) && (await guarded(() => api(`/me/s3key/delete?id=${k.id}`, {}))) && s3.refetch()}
                >
                  {t('delete')}
                </button>
              </td>
            </tr>
          )}
        </DataTable>
        <Show when={newS3Key()}>
          {(made) => (
            <p class="muted">
              {t('m.access_key_id')}: <code>{made().access_key_id}</code>
              <br />
              {t('m.secret_access_key_shown_once')}: <code>{made().secret_access_key}</code>
            </p>
          )}
        </Show>
        <form
          style={{ 'margin-top': '12px' }}
          onSubmit={async (e) => {
            const { el, data } = form(e);
            let made: { access_key_id: string; secret_access_key: string } | undefined;
            if (await guarded(async () => (made = await api<{ access_key_id: string; secret_access_key: string }>('/me/s3key/create', { title: data.title })))) {
              setNewS3Key(made);
              el.reset();
              void s3.refetch();
            }
          }}
        >
          <label>
            {t('m.title')}
            <input name="title" required />
          </label>
          <div class="actions">
            <button type="submit">{t('add')}</button>
          </div>
        </form>
      </div>
      <div class="card" style={{ 'margin-top': '16px' }} data-testid="app-passwords">
        <h2>{t('m.app_passwords')}</h2>
        <p class="muted">{t('m.app_passwords_help')}</p>
        <DataTable columns={[t('m.app_password_name'), t('m.added'), t('m.last_used'), '']} rows={appPasswords()?.content ?? []}>
          {(a) => (
            <tr>
              <td>{a.name}</td>
              <td>{formatDate(a.added_time)}</td>
              <td>{a.last_used_time ? formatDate(a.last_used_time) : t('m.never')}</td>
              <td>
                <button
                  class="small danger"
                  onClick={async () =>
                    (await confirmAction(t('delete'), `${t('delete')} ${a.name}?`)) &&
                    (await guarded(() => api(`/me/app_password/delete?id=${a.id}`, {}))) &&
                    appPasswordsAction.refetch()
                  }
                >
                  {t('delete')}
                </button>
              </td>
            </tr>
          )}
        </DataTable>
        <Show when={newSecret()}>
          {(secret) => (
            <p role="status">
              {t('m.app_password_created')} <code data-testid="app-password-secret">{secret()}</code>
            </p>
          )}
        </Show>
        <form
          style={{ 'margin-top': '12px' }}
          onSubmit={async (e) => {
            const { el, data } = form(e);
            let created: { password: string } | undefined;
            if (await guarded(async () => (created = await api<{ password: string }>('/me/app_password/create', { name: data.name })))) {
              el.reset();
              setNewSecret(created?.password);
              void appPasswordsAction.refetch();
            }
          }}
        >
          <label>
            {t('m.app_password_name')}
            <input name="name" required maxlength="255" />
          </label>
          <div class="actions">
            <button type="submit">{t('m.create')}</button>
          </div>
        </form>
      </div>
    </div>
  );
}
