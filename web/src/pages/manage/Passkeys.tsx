// The current user's passkeys (profile page): add one with this device or a security key, list, delete.
import { createSignal } from 'solid-js';
import { act } from '../../actions';
import { api, type Passkey } from '../../api';
import { formatDate } from '../../format';
import { t } from '../../i18n';
import { passkeysSupported, registerPasskey } from '../../passkeys';
import { notifyError } from '../../state';
import { KeyCard } from './KeyCard';


export default function Passkeys() {
  const [busy, setBusy] = createSignal(false);
  const add = async (refetch: () => unknown) => {
    if (!passkeysSupported()) return notifyError(new Error(t('login.passkey_unsupported')));
    setBusy(true);
    try {
      await act(registerPasskey, refetch, t('m.passkey_added'));
    } finally {
      setBusy(false);
    }
  };
  return (
    <KeyCard
      testid="passkeys"
      title={t('m.passkeys')}
      help={t('m.passkeys_help')}
      load={() => api<Passkey[]>('/authn/getcredentials')}
      emptyOnError
      columns={[t('col.name'), t('m.fingerprint'), t('m.added'), t('m.last_used')]}
      cells={(k) => (
        <>
          <td>{k.name}</td>
          <td>
            <code>{k.fingerprint}</code>
          </td>
          <td>{formatDate(k.added_time)}</td>
          <td>{k.last_used_time ? formatDate(k.last_used_time) : t('m.never')}</td>
        </>
      )}
      name={(k) => k.name}
      revoke={(k) => api('/authn/delete_authn', { id: k.id })}
    >
      {(refetch) => (
        <div class="actions" style={{ 'margin-top': '12px' }}>
          <button type="button" data-testid="passkey-add" disabled={busy()} onClick={() => add(refetch)}>
            {t('m.passkey_add')}
          </button>
        </div>
      )}
    </KeyCard>
  );
}
