import { createResource, createSignal, For } from 'solid-js';
import { busyAct } from '../../actions';
import { api } from '../../api';
import { t } from '../../i18n';
import { PageHead } from './Table';
import { showTasks } from './Tasks';

const POLICIES = ['delete_on_upload_succeed', 'delete_on_upload_failed', 'delete_always', 'delete_never', 'upload_download_stream'];

export default function Offline() {
  const [tools] = createResource(() => api<string[]>('/public/offline_download_tools'));
  const [busy, setBusy] = createSignal(false);
  const submit = async (e: SubmitEvent) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget as HTMLFormElement);
    const urls = String(f.get('urls')).split('\n').map((u) => u.trim()).filter(Boolean);
    const body = { urls, path: f.get('path'), tool: f.get('tool'), delete_policy: f.get('delete_policy') };
    await busyAct(setBusy, () => api('/fs/add_offline_download', body), () => showTasks('offline_download'));
  };
  return (
    <form onSubmit={submit}>
      <PageHead title={t('m.offline_download')} />
      <div class="card">
        <label>
          {t('m.urls_one_per_line')}
          <textarea name="urls" required />
        </label>
        <label>
          {t('m.destination_folder')}
          <input name="path" value="/" required />
        </label>
        <label>
          {t('m.tool')}
          <select name="tool">
            <For each={[...(tools() ?? [])].sort()}>{(x) => <option value={x}>{x}</option>}</For>
          </select>
        </label>
        <label>
          {t('m.delete_policy')}
          <select name="delete_policy">
            <For each={POLICIES}>{(x) => <option value={x}>{x}</option>}</For>
          </select>
        </label>
        <p class="help">{t('m.the_tools_addresses_are_set_in_settings_')}</p>
        <div class="actions">
          <button type="submit" class="primary" disabled={busy()}>
            {t('add')}
          </button>
        </div>
      </div>
    </form>
  );
}
