// Tasks of one kind, polled every second while the page is open: running and finished apart,
// a filter by state (and, for admins, "only mine"), speed and time left of running tasks, and
// retry / cancel / delete per row or for the ticked rows at once.
import { createMemo, createResource, createSignal, For, onCleanup, Show } from 'solid-js';
import { act } from '../../actions';
import { api, type Task, type TaskKind } from '../../api';
import { formatDate, formatSize } from '../../format';
import { type MessageKey, t } from '../../i18n';
import { formatDuration, formatSpeed, RateMeter, timeLeft } from '../../rate';
import { navigate } from '../../router';
import { me } from '../../state';
import { DataTable, PageHead } from './Table';

/** One tab per task kind of the server (src/tasks/kinds.ts): a kind added there breaks this typecheck until it has a label here. */
const KIND_LABELS: Record<TaskKind, MessageKey> = {
  upload: 'task.kind_upload',
  copy: 'task.kind_copy',
  move: 'task.kind_move',
  offline_download: 'task.kind_offline_download',
  offline_download_transfer: 'task.kind_offline_download_transfer',
  decompress: 'task.kind_decompress',
  decompress_upload: 'task.kind_decompress_upload',
  sync: 'task.kind_sync',
};
const KINDS = Object.entries(KIND_LABELS) as Array<[TaskKind, MessageKey]>;
const STATES: MessageKey[] = ['m.state_pending', 'm.state_running', 'm.state_succeeded', 'm.state_canceling', 'm.state_canceled', 'm.state_errored', 'm.state_failing', 'm.state_failed', 'm.state_waiting_retry', 'm.state_before_retry'];
/** Filters by state: the states each one shows. */
const FILTERS: Array<[string, MessageKey, number[]]> = [
  ['all', 'task.filter_all', [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]],
  ['running', 'task.filter_running', [0, 1, 3, 6, 8, 9]],
  ['succeeded', 'm.state_succeeded', [2]],
  ['failed', 'm.state_failed', [5, 7]],
  ['canceled', 'm.state_canceled', [4]],
];
const CANCELLABLE = [0, 1, 8, 9];
const RETRYABLE = [4, 5, 7];
const DELETABLE = [2, 4, 5, 7];
const POLL_MS = 1000;
let openOnKind: TaskKind = 'upload';

/** Opens the tasks page on the tab of one kind (after adding tasks of that kind). */
export function showTasks(kind: TaskKind): void {
  openOnKind = kind;
  navigate('/@manage/tasks');
}

export default function Tasks(props: { admin: boolean }) {
  const [kind, setKind] = createSignal(openOnKind);
  openOnKind = 'upload';
  const [filter, setFilter] = createSignal('all');
  const [mine, setMine] = createSignal(false);
  const [ticked, setTicked] = createSignal(new Set<string>());
  const prefix = () => `${props.admin ? '/admin' : ''}/task/${kind()}`;
  const [tasks, { refetch }] = createResource(prefix, async (p) => {
    const [undone, done] = await Promise.all([api<Task[] | null>(`${p}/undone`), api<Task[] | null>(`${p}/done`)]);
    // The two lists are answered by two requests: a task that finished between them (a cancel
    // taking effect) is in both. It is shown once, as finished, and counted once when ticked.
    const finished = new Set((done ?? []).map((x) => x.id));
    return { undone: (undone ?? []).filter((x) => !finished.has(x.id)), done: done ?? [] };
  });
  const timer = setInterval(() => {
    if (!document.hidden) void refetch();
  }, POLL_MS);
  onCleanup(() => clearInterval(timer));

  // speed of each running task from the bytes done at each poll
  const speeds = createSpeeds(() => tasks.latest?.undone ?? []);

  const shown = (list: Task[]) => {
    const states = FILTERS.find(([f]) => f === filter())![2];
    return list.filter((x) => states.includes(x.state) && (!mine() || x.creator === me()?.username));
  };
  const running = () => shown(tasks.latest?.undone ?? []);
  const finished = () => shown(tasks.latest?.done ?? []);
  const all = () => [...running(), ...finished()];
  const selected = () => all().filter((x) => ticked().has(x.id));

  const call = (verb: string, tid: string) => act(() => api(`${prefix()}/${verb}?tid=${encodeURIComponent(tid)}`, {}), refetch);
  const whole = (verb: string) => act(() => api(`${prefix()}/${verb}`, {}), refetch);
  /** A verb on every ticked task it applies to, in one request. */
  const bulk = async (verb: 'cancel' | 'retry' | 'delete', states: number[], done: MessageKey) => {
    const ids = selected().filter((x) => states.includes(x.state)).map((x) => x.id);
    if (!ids.length) return;
    const ok = await act(() => api(`${prefix()}/${verb}_some`, ids), undefined, t(done, { n: ids.length }));
    if (ok) setTicked(new Set<string>());
    await refetch();
  };
  const tick = (id: string, on: boolean) =>
    setTicked((s) => {
      const n = new Set(s);
      if (on) n.add(id);
      else n.delete(id);
      return n;
    });
  const row: RowContext = { ticked, tick, speeds, call };

  return (
    <div>
      <PageHead title={t('m.tasks')}>
        <button onClick={() => whole('clear_done')}>{t('m.clear_done')}</button>
        <button onClick={() => whole('clear_succeeded')}>{t('m.clear_succeeded')}</button>
        <button onClick={() => whole('retry_failed')}>{t('m.retry_failed')}</button>
      </PageHead>
      <KindTabs
        kind={kind()}
        choose={(k) => {
          setKind(k);
          setTicked(new Set<string>());
        }}
      />
      <div class="task-tools">
        <label>
          {t('task.filter')}{' '}
          <select name="task-filter" value={filter()} onChange={(e) => setFilter(e.currentTarget.value)}>
            <For each={FILTERS}>{([f, label]) => <option value={f}>{t(label)}</option>}</For>
          </select>
        </label>
        <Show when={props.admin}>
          <label>
            <input type="checkbox" checked={mine()} onChange={(e) => setMine(e.currentTarget.checked)} /> {t('task.only_mine')}
          </label>
        </Show>
        <span class="grow" />
        <Show when={selected().length > 0}>
          <span class="muted" data-testid="tasks-ticked">
            {t('selected', { n: selected().length })}
          </span>
          <button onClick={() => bulk('retry', RETRYABLE, 'task.retried')}>{t('task.retry_selected')}</button>
          <button onClick={() => bulk('cancel', CANCELLABLE, 'task.canceled')}>{t('task.cancel_selected')}</button>
          <button class="danger" onClick={() => bulk('delete', DELETABLE, 'task.deleted')}>
            {t('task.delete_selected')}
          </button>
        </Show>
      </div>
      <Show when={tasks.error}>
        <p class="error">{String(tasks.error.message)}</p>
      </Show>
      <h2>{t('task.running', { n: running().length })}</h2>
      {taskTable(running(), true, 'task-running', row)}
      <h2>{t('task.finished', { n: finished().length })}</h2>
      {taskTable(finished(), false, 'task-row', row)}
    </div>
  );
}

/** One tab per task kind. */
function KindTabs(props: { kind: TaskKind; choose: (k: TaskKind) => void }) {
  return (
    <div class="tabs" role="tablist">
      <For each={KINDS}>
        {([k, label]) => (
          <button role="tab" classList={{ active: props.kind === k }} aria-selected={props.kind === k} onClick={() => props.choose(k)}>
            {t(label)}
          </button>
        )}
      </For>
    </div>
  );
}

interface RowContext {
  ticked: () => Set<string>;
  tick: (id: string, on: boolean) => void;
  speeds: () => Map<string, number>;
  call: (verb: string, tid: string) => unknown;
}

/** Running or finished tasks: a row each with its state, progress, speed and time left (running) or size and end, and its verbs. */
function taskTable(rows: Task[], live: boolean, testid: string, { ticked, tick, speeds, call }: RowContext) {
  return (
    <DataTable columns={['', t('col.name'), t('m.state'), t('m.progress'), live ? t('task.speed') : t('col.size'), live ? t('task.left') : t('task.ended'), '']} rows={rows}>
      {(task) => (
        <tr data-testid={testid} data-id={task.id}>
          <td>
            <input type="checkbox" aria-label={task.name} checked={ticked().has(task.id)} onChange={(e) => tick(task.id, e.currentTarget.checked)} />
          </td>
          <td>
            {task.name}
            <Show when={task.status}>
              <div class="help">{task.status}</div>
            </Show>
            <Show when={task.error}>
              <div class="error help">{task.error}</div>
            </Show>
          </td>
          <td data-testid="task-state">{STATES[task.state] ? t(STATES[task.state]!) : task.state}</td>
          <td>
            <progress max={100} value={task.progress} /> {Math.round(task.progress)}%
          </td>
          <Show
            when={live}
            fallback={
              <>
                <td>{task.total_bytes ? formatSize(task.total_bytes) : ''}</td>
                <td>{task.end_time ? formatDate(task.end_time) : ''}</td>
              </>
            }
          >
            <td data-testid="task-speed">{speeds().get(task.id) ? formatSpeed(speeds().get(task.id)!, formatSize) : '–'}</td>
            <td data-testid="task-left">{formatDuration(timeLeft(task.total_bytes * (1 - task.progress / 100), speeds().get(task.id) ?? 0))}</td>
          </Show>
          <td class="actions-cell">
            <Show when={CANCELLABLE.includes(task.state)}>
              <button class="small" onClick={() => call('cancel', task.id)}>
                {t('cancel')}
              </button>
            </Show>
            <Show when={RETRYABLE.includes(task.state)}>
              <button class="small" onClick={() => call('retry', task.id)}>
                {t('m.retry')}
              </button>
            </Show>
            <Show when={DELETABLE.includes(task.state)}>
              <button class="small danger" onClick={() => call('delete', task.id)}>
                {t('delete')}
              </button>
            </Show>
          </td>
        </tr>
      )}
    </DataTable>
  );
}

/** Bytes per second of each running task, from the bytes done at each poll. */
function createSpeeds(undone: () => Task[]) {
  const meters = new Map<string, RateMeter>();
  return createMemo(() => {
    const out = new Map<string, number>();
    for (const task of undone()) {
      if (!task.total_bytes || task.state !== 1) continue;
      let m = meters.get(task.id);
      if (!m) meters.set(task.id, (m = new RateMeter()));
      out.set(task.id, m.sample((task.progress / 100) * task.total_bytes));
    }
    return out;
  });
}
