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
      <PageHead title="Profile" />
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
          New password (empty keeps the current one)
          <input name="password" type="password" autocomplete="new-password" />
        </label>
        <div class="actions">
          <button type="submit" class="primary">
            {t('save')}
          </button>
        </div>
      </form>

      <div class="card" style={{ 'margin-top': '16px' }}>
        <h2>Two-factor authentication</h2>
        <Show
          when={!me()?.otp}
          fallback={<p>2FA is on for this account. An administrator can turn it off in Users.</p>}
        >
          <Show
            when={otp()}
            fallback={<button onClick={() => api<{ qr: string; secret: string }>('/auth/2fa/generate', {}).then(setOtp, notifyError)}>Enable 2FA</button>}
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
                <p>Scan the code with an authenticator app, then enter the code it shows.</p>
                <img src={o().qr} alt="2FA QR code" width="180" height="180" />
                <p class="muted">
                  Secret: <code>{o().secret}</code>
                </p>
                <label>
                  {t('login.otp')}
                  <input name="code" inputmode="numeric" maxlength="6" required />
                </label>
                <div class="actions">
                  <button type="submit" class="primary">
                    Verify
                  </button>
                </div>
              </form>
            )}
          </Show>
        </Show>
      </div>

      <div class="card" style={{ 'margin-top': '16px' }}>
        <h2>SSH keys</h2>
        <DataTable columns={['Title', 'Fingerprint', 'Added', 'Last used', '']} rows={keys()?.content ?? []}>
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
            Title
            <input name="title" required />
          </label>
          <label>
            Public key (an authorized_keys line)
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
