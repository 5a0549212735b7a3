// The current user's passkeys (profile page): add one with this device or a security key, list, delete.
import { createResource, createSignal } from 'solid-js';
import { act } from '../../actions';
import { api } from '../../api';
import { confirmAction } from '../../components/Dialog';
import { formatDate } from '../../format';
import { t } from '../../i18n';
import { passkeysSupported, registerPasskey } from '../../passkeys';
import { notifyError } from '../../state';
import { DataTable } from './Table';

interface Passkey {
  /** The credential id in standard base64, as delete_authn takes it. */
  id: string;
  name: string;
  fingerprint: string;
  added_time: string;
  /** Empty until first used. */
  last_used_time: string;
}

export default function Passkeys() {
  const [list, { refetch }] = createResource(() => api<Passkey[]>('/authn/getcredentials'));
  const [busy, setBusy] = createSignal(false);
  const add = async () => {
    if (!passkeysSupported()) return notifyError(new Error(t('login.passkey_unsupported')));
    setBusy(true);
    try {
      await act(registerPasskey, refetch, t('m.passkey_added'));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="card" style={{ 'margin-top': '16px' }} data-testid="passkeys">
      <h2>{t('m.passkeys')}</h2>
      <p class="muted">{t('m.passkeys_help')}</p>
      <DataTable columns={[t('col.name'), t('m.fingerprint'), t('m.added'), t('m.last_used'), '']} rows={list.state === 'errored' ? [] : (list() ?? [])}>
        {(k) => (
          <tr>
            <td>{k.name}</td>
            <td>
              <code>{k.fingerprint}</code>
            </td>
            <td>{formatDate(k.added_time)}</td>
            <td>{k.last_used_time ? formatDate(k.last_used_time) : t('m.never')}</td>
            <td>
              <button
                class="small danger"
                onClick={async () => (await confirmAction(t('delete'), `${t('delete')} ${k.name}?`)) && (await act(() => api('/authn/delete_authn', { id: k.id }))) && refetch()}
              >
                {t('delete')}
              </button>
            </td>
          </tr>
        )}
      </DataTable>
      <div class="actions" style={{ 'margin-top': '12px' }}>
        <button type="button" data-testid="passkey-add" disabled={busy()} onClick={add}>
          {t('m.passkey_add')}
        </button>
      </div>
    </div>
  );
}
