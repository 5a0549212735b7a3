// Other: the administrator's API token (the token setting), shown and reset as OpenList's Other page does.
import { createResource, createSignal, Show } from 'solid-js';
import { act } from '../../actions';
import { api, type Setting } from '../../api';
import { confirmAction } from '../../components/Dialog';
import { t } from '../../i18n';
import { PageHead } from './Table';

export default function OtherSettings() {
  const [tokenSetting, { mutate }] = createResource(() => api<Setting>('/admin/setting/get?key=token'));
  const [busy, setBusy] = createSignal(false);
  const reset = async () => {
    if (!(await confirmAction(t('other.reset_token'), t('other.reset_confirm')))) return;
    setBusy(true);
    await act(async () => {
      const value = await api<string>('/admin/setting/reset_token', {});
      const s = tokenSetting();
      if (s) mutate({ ...s, value });
    });
    setBusy(false);
  };
  return (
    <div>
      <PageHead title={t('m.other')} />
      <div class="card">
        <Show when={tokenSetting()} fallback={<p class="muted">{tokenSetting.error ? String(tokenSetting.error.message) : t('loading')}</p>}>
          {(s) => (
            <div class="field wide">
              <label for="other-token">
                {t('other.token')}
                <input id="other-token" name="token" type="text" readonly value={s().value} aria-describedby="other-token-help" />
              </label>
              <div class="help" id="other-token-help">
                {t('other.token_hint')}
              </div>
            </div>
          )}
        </Show>
        <div class="actions">
          <button type="button" class="danger" disabled={busy() || !tokenSetting()} onClick={() => void reset()}>
            {t('other.reset_token')}
          </button>
        </div>
      </div>
    </div>
  );
}
