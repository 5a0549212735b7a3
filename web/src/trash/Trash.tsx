// The trash of the storage holding a folder (`/@trash/<folder>`): what was deleted there — by the
// user, or by anyone for an admin — with restore (where it was, or into a chosen folder; names
// already taken are asked about first) and delete for good. Reached from the folder's toolbar.
import { createMemo, createResource, createSignal, Show } from 'solid-js';
import { api, joinPath, parentOf, type TrashEntry } from '../api';
import { confirmAction, showDialog } from '../components/Dialog';
import { pickFolder } from '../components/FolderPicker';
import Icon from '../components/Icon';
import { iconOf } from '../components/icons';
import { formatDate, formatSize } from '../format';
import { t } from '../i18n';
import { DataTable } from '../pages/manage/Table';
import { href, linkClick } from '../router';
import { setPageTitle } from '../title';
import { notify, notifyError, passwordFor } from '../state';

const PER_PAGE = 50;
type Policy = 'cancel' | 'skip' | 'overwrite';

/** The targets among `paths` that something already holds (asked a few at a time). */
async function takenAmong(paths: string[]): Promise<string[]> {
  const taken: string[] = [];
  for (let i = 0; i < paths.length; i += 8) {
    const batch = paths.slice(i, i + 8);
    const found = await Promise.all(batch.map((p) => api('/fs/get', { path: p, password: passwordFor(p) }).then(() => true, () => false)));
    batch.forEach((p, j) => found[j] && taken.push(p));
  }
  return taken;
}

/** Asks what to do with names already taken: replace them, skip them, or stop. */
function askConflict(taken: string[]): Promise<Policy | undefined> {
  const names = taken.slice(0, 5).join(', ') + (taken.length > 5 ? ', …' : '');
  return showDialog<Policy>(t('trash.conflict_title'), (done) => (
    <div>
      <p>{t('trash.conflict_text', { n: taken.length, names })}</p>
      <div class="actions">
        <button type="button" onClick={() => done()}>{t('cancel')}</button>
        <button type="button" data-policy="skip" ref={(el) => setTimeout(() => el.focus())} onClick={() => done('skip')}>
          {t('trash.conflict_skip')}
        </button>
        <button type="button" class="danger" data-policy="overwrite" onClick={() => done('overwrite')}>
          {t('trash.conflict_overwrite')}
        </button>
      </div>
    </div>
  ));
}

/** Restores `entries` (into `dst`, or where each was); true when the server was asked. */
async function restore(entries: TrashEntry[], dst?: string): Promise<boolean> {
  const taken = await takenAmong(entries.map((e) => (dst === undefined ? e.path : joinPath(dst, e.name))));
  let policy: Policy = 'cancel';
  if (taken.length) {
    const chosen = await askConflict(taken);
    if (!chosen) return false;
    policy = chosen;
  }
  try {
    const body = { ids: entries.map((e) => e.id), conflict_policy: policy, ...(dst === undefined ? {} : { dst_dir: dst, password: passwordFor(dst) }) };
    const { restored } = await api<{ restored: number }>('/fs/trash/restore', body);
    notify(t('trash.restored', { n: restored, total: entries.length }));
  } catch (e) {
    notifyError(e);
  }
  return true;
}

async function purge(entries: TrashEntry[]): Promise<boolean> {
  if (!(await confirmAction(t('trash.purge'), t('trash.purge_confirm', { n: entries.length })))) return false;
  try {
    await api('/fs/trash/purge', { ids: entries.map((e) => e.id) });
    notify(t('trash.purged', { n: entries.length }));
  } catch (e) {
    notifyError(e);
  }
  return true;
}

export default function Trash(props: { path: string }) {
  setPageTitle(t('trash'));
  const [page, setPage] = createSignal(1);
  const [data, { refetch }] = createResource(
    () => [props.path, page()] as const,
    ([p, pg]) => api<{ content: TrashEntry[]; total: number }>('/fs/trash/list', { path: p, page: pg, per_page: PER_PAGE, password: passwordFor(p) }),
  );
  const [selected, setSelected] = createSignal<ReadonlySet<string>>(new Set());
  const entries = () => data.latest?.content ?? [];
  const chosen = createMemo(() => entries().filter((e) => selected().has(e.id)));
  const pages = () => Math.max(1, Math.ceil((data.latest?.total ?? 0) / PER_PAGE));
  const toggle = (id: string, on: boolean) => {
    const next = new Set(selected());
    if (on) next.add(id);
    else next.delete(id);
    setSelected(next);
  };
  const after = (asked: boolean) => {
    if (!asked) return;
    setSelected(new Set<string>());
    void refetch();
  };
  const restoreTo = async (list: TrashEntry[]) => {
    const dst = await pickFolder(t('trash.restore_to_title', { n: list.length }), parentOf(list[0]!.path));
    if (dst !== undefined) after(await restore(list, dst));
  };
  const columns = [t('trash.select'), t('col.name'), t('trash.was'), t('col.size'), t('trash.deleted_at'), t('trash.deleted_by'), t('trash.front'), t('actions')];
  return (
    <main class="container trash">
      <div class="section-head">
        <h1>
          <Icon name="trash" /> {t('trash')}
        </h1>
        <span class="grow" />
        <a class="button" href={href(props.path)} onClick={(e) => linkClick(e, props.path)}>
          {t('trash.back')}
        </a>
        <button onClick={() => void refetch()}>{t('refresh')}</button>
      </div>
      <p class="muted">{t('trash.of', { path: props.path })}</p>
      <Show when={data.error}>
        <p class="error" role="alert">{String((data.error as Error).message)}</p>
      </Show>
      <div class="actionbar" role="toolbar" aria-label={t('actions')}>
        <label>
          <input
            type="checkbox"
            data-testid="trash-select-all"
            checked={entries().length > 0 && chosen().length === entries().length}
            disabled={entries().length === 0}
            onChange={(e) => setSelected(new Set(e.currentTarget.checked ? entries().map((x) => x.id) : []))}
          />
          {t('trash.select_all')}
        </label>
        <Show when={chosen().length > 0}>
          <span class="muted" data-testid="trash-selected">{t('selected', { n: chosen().length })}</span>
          <button class="primary" data-action="restore-selected" onClick={async () => after(await restore(chosen()))}>
            {t('trash.restore')}
          </button>
          <button data-action="restore-selected-to" onClick={() => void restoreTo(chosen())}>
            {t('trash.restore_to')}
          </button>
          <button class="danger" data-action="purge-selected" onClick={async () => after(await purge(chosen()))}>
            {t('trash.purge')}
          </button>
        </Show>
      </div>
      <Show when={!data.loading || data.latest} fallback={<p class="muted">{t('loading')}</p>}>
        <Show when={entries().length > 0} fallback={<p class="empty muted" data-testid="trash-empty">{t('trash.empty')}</p>}>
          <DataTable columns={columns} rows={entries()}>
            {(e) => <TrashRow entry={e} selected={selected().has(e.id)} toggle={(on) => toggle(e.id, on)} restore={async () => after(await restore([e]))} restoreTo={() => void restoreTo([e])} purge={async () => after(await purge([e]))} />}
          </DataTable>
        </Show>
      </Show>
      <Pager page={page()} pages={pages()} total={data.latest?.total ?? 0} go={(p) => (setSelected(new Set<string>()), setPage(p))} />
    </main>
  );
}

/** One entry: its checkbox, what it was, and its three actions. */
function TrashRow(props: { entry: TrashEntry; selected: boolean; toggle: (on: boolean) => void; restore: () => void; restoreTo: () => void; purge: () => void }) {
  const e = props.entry;
  return (
    <tr data-testid="trash-row" data-name={e.name} data-id={e.id} classList={{ selected: props.selected }}>
      <td>
        <input type="checkbox" aria-label={`${t('trash.select')} ${e.name}`} checked={props.selected} onChange={(ev) => props.toggle(ev.currentTarget.checked)} />
      </td>
      <td class="trash-name">
        <span class="ficon">
          <Icon name={iconOf({ ...e, type: 0 })} />
        </span>{' '}
        {e.name}
      </td>
      <td class="path">{parentOf(e.path)}</td>
      <td>{e.is_dir ? '' : formatSize(e.size)}</td>
      <td>{formatDate(e.deleted_at)}</td>
      <td>{e.deleted_by}</td>
      <td>{e.front}</td>
      <td class="actions-cell">
        <button class="small" data-action="restore" onClick={() => props.restore()}>
          {t('trash.restore')}
        </button>
        <button class="small" data-action="restore-to" onClick={() => props.restoreTo()}>
          {t('trash.restore_to')}
        </button>
        <button class="small danger" data-action="purge" onClick={() => props.purge()}>
          {t('trash.purge')}
        </button>
      </td>
    </tr>
  );
}

function Pager(props: { page: number; pages: number; total: number; go: (page: number) => void }) {
  const label = () => t('trash.page', { page: props.page, pages: props.pages, total: props.total });
  return (
    <Show when={props.pages > 1}>
      <nav class="pager" aria-label={label()}>
        <button disabled={props.page <= 1} onClick={() => props.go(props.page - 1)}>
          {t('trash.previous')}
        </button>
        <span class="muted">{label()}</span>
        <button disabled={props.page >= props.pages} onClick={() => props.go(props.page + 1)}>
          {t('trash.next')}
        </button>
      </nav>
    </Show>
  );
}
