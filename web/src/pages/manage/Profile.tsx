// The current user's account: name and password, SSH keys, two-factor authentication.
import { createResource, createSignal, Show } from 'solid-js';
import { act } from '../../actions';
import { api } from '../../api';
import { confirmAction } from '../../components/Dialog';
import { formatDate } from '../../format';
import { t } from '../../i18n';
import { loadMe, me, notifyError } from '../../state';
import { DataTable, PageHead } from './Table';

interface SshKey {
  id: number;
  title: string;
  fingerprint: string;
  added_time: string;
  last_used_time: string;
}

export default function Profile() {
  const [keys, { refetch }] = createResource(() => api<{ content: SshKey[] | null }>('/me/sshkey/list?page=1&per_page=100'));
  const [otp, setOtp] = createSignal<{ qr: string; secret: string } | undefined>();
  const guarded = (fn: () => Promise<unknown>) => act(fn);
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
          if (await guarded(() => api('/me/update', { username: data.username, password: data.password, sso_id: '' }))) await loadMe();
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

      <div class="card" style={{ 'margin-top': '16px' }}>
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
    </div>
  );
}
