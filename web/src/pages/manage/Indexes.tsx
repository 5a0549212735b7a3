// The search index: build, update, stop and clear, with the progress polled while open.
import { createResource, onCleanup, Show } from 'solid-js';
import { act } from '../../actions';
import { api } from '../../api';
import { promptText } from '../../components/Dialog';
import { formatDate } from '../../format';
import { t } from '../../i18n';
import { settings } from '../../state';
import Settings from './Settings';

interface Progress {
  obj_count: number;
  is_done: boolean;
  last_done_time: string | null;
  error: string;
}

export default function Indexes() {
  const enabled = () => !!settings().search_index && settings().search_index !== 'none';
  const [progress, { refetch }] = createResource(enabled, () => api<Progress>('/admin/index/progress'));
  const timer = setInterval(() => enabled() && !document.hidden && void refetch(), 2000);
  onCleanup(() => clearInterval(timer));
  const call = async (verb: string, body: unknown = {}) => {
    await act(() => api(`/admin/index/${verb}`, body), refetch);
  };
  return (
    <div>
      <Settings group={6} title="Index" />
      <Show when={enabled()} fallback={<p class="muted">Choose a search index above and save to build one.</p>}>
        <div class="card">
          <h2>Progress</h2>
          <Show when={progress.latest} fallback={<p class="muted">{progress.error ? String(progress.error.message) : t('loading')}</p>}>
            {(p) => (
              <p data-testid="index-progress">
                {p().obj_count} objects · {p().is_done ? 'done' : 'building…'}
                {p().last_done_time ? ` · last built ${formatDate(p().last_done_time!)}` : ''}
                {p().error ? ` · ${p().error}` : ''}
              </p>
            )}
          </Show>
          <div class="actions">
            <button class="primary" onClick={() => call('build')}>
              Build index
            </button>
            <button
              onClick={async () => {
                const paths = await promptText('Update paths', 'Paths to update (comma separated)', '/');
                if (paths) void call('update', { paths: paths.split(',').map((p) => p.trim()).filter(Boolean), max_depth: -1 });
              }}
            >
              Update paths
            </button>
            <button onClick={() => call('stop')}>Stop</button>
            <button class="danger" onClick={() => call('clear')}>
              Clear
            </button>
          </div>
        </div>
      </Show>
    </div>
  );
}
