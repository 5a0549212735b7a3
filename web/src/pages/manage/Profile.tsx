// The current user's account: storage used of the quota, name and password, two-factor authentication, single sign-on binding, passkeys, SSH keys, S3 access keys, app passwords, sessions.
import { createSignal, onMount, Show } from 'solid-js';
import { act } from '../../actions';
import { api, type AppPassword, type S3Key, type SshKey } from '../../api';
import { confirmAction } from '../../components/Dialog';
import { formatDate } from '../../format';
import { t } from '../../i18n';
import { loadMe, me, notifyError, settings } from '../../state';
import { startSso, takeFromUrl } from '../../sso';
import { KeyCard, KeyForm } from './KeyCard';
import Passkeys from './Passkeys';
import { MySessions } from './Sessions';
import UsageBar from '../../components/UsageBar';
import { PageHead } from './Table';

interface NewS3Key {
  access_key_id: string;
  secret_access_key: string;
}

export default function Profile() {
  onMount(() => {
    const ticket = takeFromUrl('sso_id');
    if (ticket) void bindSso(ticket);
  });
  return (
    <div>
      <PageHead title={t('m.profile')} />
      <UsageBar />
      <AccountForm />
      <TwoFactor />
      <SsoBinding />
      <Show when={settings().webauthn_login_enabled === 'true'}>
        <Passkeys />
      </Show>
      <SshKeys />
      <S3Keys />
      <AppPasswords />
      <MySessions />
    </div>
  );
}

const guarded = (fn: () => Promise<unknown>) => act(fn);
// Binding: the provider's ticket goes to /me/update as sso_id; the server stores the identity it vouches for.
const bindSso = (ticket: string) => act(() => api('/me/update', { username: me()?.username ?? '', password: '', sso_id: ticket }), loadMe, t('m.sso_bound_done'));
const form = (e: SubmitEvent) => {
  e.preventDefault();
  const el = e.currentTarget as HTMLFormElement;
  return { el, data: Object.fromEntries(new FormData(el)) as Record<string, string> };
};

/** The user's name and password. */
function AccountForm() {
  return (
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
  );
}

/** Two-factor authentication: a secret generated, then verified with a code. */
function TwoFactor() {
  const [otp, setOtp] = createSignal<{ qr: string; secret: string } | undefined>();
  return (
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
  );
}

/** The single sign-on identity bound to the account (with SSO on). */
function SsoBinding() {
  return (
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
  );
}

/** The SSH public keys SFTP accepts for the account. */
function SshKeys() {
  return (
    <KeyCard
      testid="ssh-keys"
      title={t('m.ssh_keys')}
      load={() => api<{ content: SshKey[] | null }>('/me/sshkey/list?page=1&per_page=100').then((r) => r.content ?? [])}
      columns={[t('m.title'), t('m.fingerprint'), t('m.added'), t('m.last_used')]}
      cells={(k) => (
        <>
          <td>{k.title}</td>
          <td>
            <code>{k.fingerprint}</code>
          </td>
          <td>{formatDate(k.added_time)}</td>
          <td>{formatDate(k.last_used_time)}</td>
        </>
      )}
      name={(k) => k.title}
      revoke={(k) => api(`/me/sshkey/delete?id=${k.id}`, {})}
    >
      {(refetch) => (
        <KeyForm create={(data) => api('/me/sshkey/add', { title: data.title, key: data.key })} done={refetch} submit={t('add')}>
          <label>
            {t('m.title')}
            <input name="title" required />
          </label>
          <label>
            {t('m.public_key_an_authorized_keys_line')}
            <textarea name="key" required />
          </label>
        </KeyForm>
      )}
    </KeyCard>
  );
}

/** S3 access keys: the secret of a new one is shown once. */
function S3Keys() {
  const [newS3Key, setNewS3Key] = createSignal<NewS3Key | undefined>();
  return (
    <KeyCard
      testid="s3-keys"
      title={t('m.s3_access_keys')}
      load={() => api<{ content: S3Key[] | null }>('/me/s3key/list').then((r) => r.content ?? [])}
      columns={[t('m.title'), t('m.access_key_id'), t('m.added'), t('m.last_used')]}
      cells={(k) => (
        <>
          <td>{k.title}</td>
          <td>
            <code>{k.access_key_id}</code>
          </td>
          <td>{formatDate(k.added_time)}</td>
          <td>{formatDate(k.last_used_time)}</td>
        </>
      )}
      name={(k) => k.title}
      revoke={(k) => api(`/me/s3key/delete?id=${k.id}`, {})}
    >
      {(refetch) => (
        <>
          <Show when={newS3Key()}>
            {(made) => (
              <p class="muted">
                {t('m.access_key_id')}: <code>{made().access_key_id}</code>
                <br />
                {t('m.secret_access_key_shown_once')}: <code>{made().secret_access_key}</code>
              </p>
            )}
          </Show>
          <KeyForm
            create={(data) => api<NewS3Key>('/me/s3key/create', { title: data.title })}
            done={(made) => {
              setNewS3Key(made);
              void refetch();
            }}
            submit={t('add')}
          >
            <label>
              {t('m.title')}
              <input name="title" required />
            </label>
          </KeyForm>
        </>
      )}
    </KeyCard>
  );
}

/** App passwords for the protocols: the secret of a new one is shown once. */
function AppPasswords() {
  // The secret of the app password just created: the server sends it this once only.
  const [newSecret, setNewSecret] = createSignal<string | undefined>();
  return (
    <KeyCard
      testid="app-passwords"
      title={t('m.app_passwords')}
      help={t('m.app_passwords_help')}
      load={() => api<{ content: AppPassword[] }>('/me/app_password/list').then((r) => r.content)}
      columns={[t('m.app_password_name'), t('m.added'), t('m.last_used')]}
      cells={(a) => (
        <>
          <td>{a.name}</td>
          <td>{formatDate(a.added_time)}</td>
          <td>{a.last_used_time ? formatDate(a.last_used_time) : t('m.never')}</td>
        </>
      )}
      name={(a) => a.name}
      revoke={(a) => api(`/me/app_password/delete?id=${a.id}`, {})}
    >
      {(refetch) => (
        <>
          <Show when={newSecret()}>
            {(secret) => (
              <p role="status">
                {t('m.app_password_created')} <code data-testid="app-password-secret">{secret()}</code>
              </p>
            )}
          </Show>
          <KeyForm
            create={(data) => api<{ password: string }>('/me/app_password/create', { name: data.name })}
            done={(created) => {
              setNewSecret(created.password);
              void refetch();
            }}
            submit={t('m.create')}
          >
            <label>
              {t('m.app_password_name')}
              <input name="name" required maxlength="255" />
            </label>
          </KeyForm>
        </>
      )}
    </KeyCard>
  );
}
