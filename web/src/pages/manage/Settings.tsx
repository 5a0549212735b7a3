// One group of settings (site, style, preview, global, offline download, index, …).
import { createResource, createSignal, For, Show } from 'solid-js';
import { createStore } from 'solid-js/store';
import { busyAct } from '../../actions';
import { api, type Setting } from '../../api';
import { t } from '../../i18n';
import { loadSettings } from '../../state';
import { fieldLabel } from '../../fieldText';
import Field from './Field';
import { PageHead } from './Table';


const READONLY = 2;
const SINGLE_GROUP = 0;

export default function Settings(props: { group: number; title: string }) {
  const [values, setValues] = createStore<Record<string, string>>({});
  const [items] = createResource(
    () => props.group,
    async (g) => {
      const list = (await api<Setting[]>(`/admin/setting/list?group=${g}`)).filter((s) => s.group !== SINGLE_GROUP);
      setValues(Object.fromEntries(list.map((s) => [s.key, s.value])));
      return list;
    },
  );
  const [saving, setSaving] = createSignal(false);
  const save = async (e: Event) => {
    e.preventDefault();
    const changed = (items() ?? []).filter((s) => s.flag !== READONLY).map((s) => ({ ...s, value: values[s.key] ?? s.value }));
    await busyAct(setSaving, () => api('/admin/setting/save', changed), loadSettings);
  };
  return (
    <form onSubmit={save}>
      <PageHead title={props.title} />
      <Show when={items()} fallback={<p class="muted">{items.error ? String(items.error.message) : t('loading')}</p>}>
        <div class="card form-grid">
          <For each={items()}>
            {(s) => (
              <Show when={s.flag !== READONLY} fallback={<p class="muted">{fieldLabel(s.key)}: {s.value}</p>}>
                <Field spec={{ name: s.key, type: s.type, options: s.options, help: s.help, required: s.type === 'select' }} value={values[s.key] ?? ''} onChange={(v) => setValues(s.key, v)} />
              </Show>
            )}
          </For>
        </div>
        <div class="actions">
          <button type="submit" class="primary" disabled={saving()}>
            {t('save')}
          </button>
        </div>
      </Show>
    </form>
  );
}
