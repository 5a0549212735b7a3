// Storages: the list with enable/disable/delete, and an add/edit form generated from the
// driver's form items (GET /api/admin/driver/info): `common` items are the storage's own
// fields, `additional` items go into its `addition` JSON.
import { createResource, createSignal, For, Show } from 'solid-js';
import { createStore } from 'solid-js/store';
import { act, busyAct } from '../../actions';
import { api, type Storage } from '../../api';
import { t, tx } from '../../i18n';
import { href, linkClick, navigate } from '../../router';
import { notify, notifyError } from '../../state';
import type { FieldSpec } from './Field';
import FieldGroups from './FieldGroups';
import { DataTable, DeleteButton, PageHead } from './Table';

/** A common field of a storage by the name the driver's info gives it (the form lists the fields the server names). */
const fieldOf = (s: Storage, name: string): unknown => (s as Record<string, unknown>)[name];
interface FormItem extends FieldSpec {
  default: string;
}
interface DriverInfo {
  common: FormItem[];
  additional: FormItem[];
  config: { name: string; alert?: string };
}

const NUMERIC = new Set(['order', 'cache_expiration']);
/** A driver's help for one of its fields in the UI's language (h.<driver>.<field>), else the driver's own English. */
const driverHelp = (driver: string, it: FormItem) => tx(`h.${driver}.${it.name}`) ?? it.help;
/** Fieldsets of the common fields, as OpenList groups them; the rest are the basics. */
const GROUP_OF: Record<string, string> = {
  cache_expiration: 'listing',
  order_by: 'listing',
  order_direction: 'listing',
  extract_folder: 'listing',
  web_proxy: 'links',
  webdav_policy: 'links',
  down_proxy_url: 'links',
  proxy_range: 'links',
  enable_sign: 'links',
};

export function StorageList() {
  const [list, { refetch }] = createResource(() => api<{ content: Storage[] | null; total: number }>('/admin/storage/list?page=1&per_page=1000'));
  const storageAction = async (verb: string, s: Storage) => {
    await act(() => api(`/admin/storage/${verb}?id=${s.id}`, {}), refetch);
  };
  return (
    <div>
      <PageHead title={t('m.storages')}>
        <button onClick={() => refetch()}>{t('refresh')}</button>
        <button onClick={() => api('/admin/storage/load_all', {}).then(() => notify(t('done')), notifyError)}>{t('m.reload_all')}</button>
        <a class="button primary" href={href('/@manage/storages/add')} onClick={(e) => linkClick(e, '/@manage/storages/add')}>
          {t('add')}
        </a>
      </PageHead>
      <DataTable columns={[t('m.mount_path'), t('m.driver'), t('m.order'), t('m.status'), t('m.remark'), '']} rows={list()?.content ?? []}>
        {(s) => (
          <tr data-testid="storage-row">
            <td>{s.mount_path}</td>
            <td>{s.driver}</td>
            <td>{s.order}</td>
            <td>
              <span class="badge" classList={{ ok: s.status === 'work', bad: s.status !== 'work' }}>
                {s.disabled ? t('m.disabled') : s.status}
              </span>
            </td>
            <td>{s.remark}</td>
            <td class="actions-cell">
              <a class="button small" href={href(`/@manage/storages/edit/${s.id}`)} onClick={(e) => linkClick(e, `/@manage/storages/edit/${s.id}`)}>
                {t('edit')}
              </a>
              <button class="small" onClick={() => storageAction(s.disabled ? 'enable' : 'disable', s)}>
                {s.disabled ? t('m.enable') : t('m.disable')}
              </button>
              <DeleteButton name={s.mount_path} onDelete={() => storageAction('delete', s)} />
            </td>
          </tr>
        )}
      </DataTable>
    </div>
  );
}

export function StorageEdit(props: { id?: number }) {
  const [names] = createResource(() => api<string[]>('/admin/driver/names'));
  const [existing] = createResource(
    () => props.id,
    (id) => api<Storage>(`/admin/storage/get?id=${id}`),
  );
  const [driver, setDriver] = createSignal('');
  const current = () => driver() || existing()?.driver || '';
  const [common, setCommon] = createStore<Record<string, string>>({});
  const [addition, setAddition] = createStore<Record<string, string>>({});
  const [info] = createResource(() => current() || undefined, async (d) => {
    const i = await api<DriverInfo>(`/admin/driver/info?driver=${encodeURIComponent(d)}`);
    const s = existing();
    const add: Record<string, unknown> = s && s.driver === d ? JSON.parse(s.addition || '{}') : {};
    setCommon(Object.fromEntries(i.common.map((it) => [it.name, s && s.driver === d ? String(fieldOf(s, it.name) ?? '') : it.default ?? ''])));
    setAddition(Object.fromEntries(i.additional.map((it) => [it.name, add[it.name] !== undefined ? String(add[it.name]) : it.default ?? ''])));
    return i;
  });
  const [saving, setSaving] = createSignal(false);

  const typed = (items: FormItem[], values: Record<string, string>) =>
    Object.fromEntries(
      items.map((it) => {
        const v = values[it.name] ?? '';
        if (it.type === 'bool') return [it.name, v === 'true'];
        if (it.type === 'number' || NUMERIC.has(it.name)) return [it.name, v === '' ? 0 : Number(v)];
        return [it.name, v];
      }),
    );

  const save = async (e: Event) => {
    e.preventDefault();
    const i = info();
    if (!i) return;
    const body = { ...(existing() ?? {}), ...typed(i.common, common), driver: current(), addition: JSON.stringify(typed(i.additional, addition)) };
    await busyAct(setSaving, () => api(props.id ? '/admin/storage/update' : '/admin/storage/create', body), () => navigate('/@manage/storages'));
  };

  return (
    <form onSubmit={save}>
      <PageHead title={props.id ? t('m.edit_storage') : t('m.add_storage')} />
      <div class="card">
        <label>
          {t('m.driver')}
          <select name="driver" value={current()} disabled={!!props.id} onChange={(e) => setDriver(e.currentTarget.value)}>
            <option value="" disabled>
              —
            </option>
            <For each={names() ?? []}>{(n) => <option value={n}>{n}</option>}</For>
          </select>
        </label>
        <Show when={info()}>
          {(i) => (
            <>
              <Show when={i().config.alert}>
                <p class="muted">{i().config.alert}</p>
              </Show>
              <FieldGroups fields={i().common.map((it) => ({ ...it, group: GROUP_OF[it.name] ?? 'basics' }))} values={common} set={(k, v) => setCommon(k, v)} />
              <FieldGroups fields={i().additional.map((it) => ({ ...it, help: driverHelp(current(), it), group: 'driver' }))} values={addition} set={(k, v) => setAddition(k, v)} vars={{ driver: current() }} />
            </>
          )}
        </Show>
      </div>
      <div class="actions">
        <button type="button" onClick={() => navigate('/@manage/storages')}>
          {t('cancel')}
        </button>
        <button type="submit" class="primary" disabled={!info() || saving()}>
          {t('save')}
        </button>
      </div>
    </form>
  );
}
