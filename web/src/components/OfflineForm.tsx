// The offline download form: URLs, destination, tool and what happens to the downloaded copy.
// Shown in Manage → Offline download and, with the destination fixed, from the folder one is in.
import { createResource, createSignal, For, Show } from 'solid-js';
import { act } from '../actions';
import { api } from '../api';
import { optionLabel } from '../fieldText';
import { t } from '../i18n';
import { passwordFor } from '../state';

const POLICIES = ['delete_on_upload_succeed', 'delete_on_upload_failed', 'delete_always', 'delete_never', 'upload_download_stream'];

export default function OfflineForm(props: { dest?: string; onDone: (urls: string[], dir: string) => void; onCancel?: () => void }) {
  const [tools] = createResource(() => api<string[]>('/public/offline_download_tools'));
  const [busy, setBusy] = createSignal(false);
  const submit = async (e: SubmitEvent) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget as HTMLFormElement);
    const urls = String(f.get('urls')).split('\n').map((u) => u.trim()).filter(Boolean);
    const dir = props.dest ?? String(f.get('path'));
    const body = { urls, path: dir, tool: f.get('tool'), delete_policy: f.get('delete_policy'), password: passwordFor(dir) };
    setBusy(true);
    await act(() => api('/fs/add_offline_download', body), () => props.onDone(urls, dir), t('offline.started', { n: urls.length, dir }));
    setBusy(false);
  };
  return (
    <form onSubmit={submit} class="offline-form">
      <label>
        {t('m.urls_one_per_line')}
        <textarea name="urls" required />
      </label>
      <Show when={props.dest === undefined}>
        <label>
          {t('m.destination_folder')}
          <input name="path" value="/" required />
        </label>
      </Show>
      <label>
        {t('m.tool')}
        <select name="tool">
          <For each={[...(tools() ?? [])].sort()}>{(x) => <option value={x}>{x}</option>}</For>
        </select>
      </label>
      <label>
        {t('m.delete_policy')}
        <select name="delete_policy">
          <For each={POLICIES}>{(x) => <option value={x}>{optionLabel(x)}</option>}</For>
        </select>
      </label>
      <p class="help">{t('m.the_tools_addresses_are_set_in_settings_')}</p>
      <div class="actions">
        <Show when={props.onCancel}>
          <button type="button" onClick={() => props.onCancel?.()}>
            {t('cancel')}
          </button>
        </Show>
        <button type="submit" class="primary" disabled={busy()}>
          {t('add')}
        </button>
      </div>
    </form>
  );
}
