// Tasks of one kind, polled every second while the page is open, so progress moves live.
import { createResource, createSignal, For, onCleanup, Show } from 'solid-js';
import { act } from '../../actions';
import { api } from '../../api';
import { formatDate, formatSize } from '../../format';
import { type MessageKey, t } from '../../i18n';
import { navigate } from '../../router';
import { DataTable, PageHead } from './Table';

interface TaskInfo {
  id: string;
  name: string;
  creator: string;
  state: number;
  status: string;
  progress: number;
  start_time: string | null;
  end_time: string | null;
  total_bytes: number;
  error: string;
}

const KINDS = ['upload', 'copy', 'move', 'offline_download', 'offline_download_transfer', 'decompress', 'decompress_upload'];
const STATES: MessageKey[] = ['m.state_pending', 'm.state_running', 'm.state_succeeded', 'm.state_canceling', 'm.state_canceled', 'm.state_errored', 'm.state_failing', 'm.state_failed', 'm.state_waiting_retry', 'm.state_before_retry'];
const POLL_MS = 1000;
let openOnKind = 'upload';

/** Opens the tasks page on the tab of one kind (after adding tasks of that kind). */
export function showTasks(kind: string): void {
  openOnKind = kind;
  navigate('/@manage/tasks');
}

export default function Tasks(props: { admin: boolean }) {
  const [kind, setKind] = createSignal(openOnKind);
  openOnKind = 'upload';
  const prefix = () => `${props.admin ? '/admin' : ''}/task/${kind()}`;
  const [tasks, { refetch }] = createResource(prefix, async (p) => {
    const [undone, done] = await Promise.all([api<TaskInfo[] | null>(`${p}/undone`), api<TaskInfo[] | null>(`${p}/done`)]);
    return [...(undone ?? []), ...(done ?? [])];
  });
  const timer = setInterval(() => {
    if (!document.hidden) void refetch();
  }, POLL_MS);
  onCleanup(() => clearInterval(timer));
  const call = async (verb: string, tid?: string) => {
    await act(() => api(`${prefix()}/${verb}${tid ? `?tid=${encodeURIComponent(tid)}` : ''}`, {}), refetch);
  };
  return (
    <div>
      <PageHead title={t('m.tasks')}>
        <button onClick={() => call('clear_done')}>{t('m.clear_done')}</button>
        <button onClick={() => call('clear_succeeded')}>{t('m.clear_succeeded')}</button>
        <button onClick={() => call('retry_failed')}>{t('m.retry_failed')}</button>
      </PageHead>
      <div class="tabs" role="tablist">
        <For each={KINDS}>
          {(k) => (
            <button role="tab" classList={{ active: kind() === k }} aria-selected={kind() === k} onClick={() => setKind(k)}>
              {k.replace(/_/g, ' ')}
            </button>
          )}
        </For>
      </div>
      <Show when={tasks.error}>
        <p class="error">{String(tasks.error.message)}</p>
      </Show>
      <DataTable columns={[t('col.name'), t('m.state'), t('m.progress'), t('col.size'), t('m.started'), '']} rows={tasks.latest ?? []}>
        {(task) => (
          <tr data-testid="task-row">
            <td>
              {task.name}
              <Show when={task.status}>
                <div class="help">{task.status}</div>
              </Show>
              <Show when={task.error}>
                <div class="error help">{task.error}</div>
              </Show>
            </td>
            <td>{STATES[task.state] ? t(STATES[task.state]!) : task.state}</td>
            <td>
              <progress max={100} value={task.progress} /> {Math.round(task.progress)}%
            </td>
            <td>{task.total_bytes ? formatSize(task.total_bytes) : ''}</td>
            <td>{task.start_time ? formatDate(task.start_time) : ''}</td>
            <td class="actions-cell">
              <Show when={[0, 1, 8, 9].includes(task.state)}>
                <button class="small" onClick={() => call('cancel', task.id)}>
                  {t('cancel')}
                </button>
              </Show>
              <Show when={[4, 7].includes(task.state)}>
                <button class="small" onClick={() => call('retry', task.id)}>
                  {t('m.retry')}
                </button>
              </Show>
              <Show when={[2, 4, 7].includes(task.state)}>
                <button class="small danger" onClick={() => call('delete', task.id)}>
                  {t('delete')}
                </button>
              </Show>
            </td>
          </tr>
        )}
      </DataTable>
    </div>
  );
}
