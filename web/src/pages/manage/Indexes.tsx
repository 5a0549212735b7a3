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
      <Settings group={6} title={t('m.index')} />
      <Show when={enabled()} fallback={<p class="muted">{t('m.choose_a_search_index_above_and_save_to_')}</p>}>
        <div class="card">
          <h2>{t('m.progress')}</h2>
          <Show when={progress.latest} fallback={<p class="muted">{progress.error ? String(progress.error.message) : t('loading')}</p>}>
            {(p) => (
              <p data-testid="index-progress">
                {t('m.index_objects', { n: p().obj_count })} · {p().is_done ? t('m.done') : t('m.building')}
                {p().last_done_time ? ` · ${t('m.last_built', { time: formatDate(p().last_done_time!) })}` : ''}
                {p().error ? ` · ${p().error}` : ''}
              </p>
            )}
          </Show>
          <div class="actions">
            <button class="primary" onClick={() => call('build')}>
              {t('m.build_index')}
            </button>
            <button
              onClick={async () => {
                const paths = await promptText(t('m.update_paths'), t('m.paths_to_update_comma_separated'), '/');
                if (paths) void call('update', { paths: paths.split(',').map((p) => p.trim()).filter(Boolean), max_depth: -1 });
              }}
            >
              {t('m.update_paths')}
            </button>
            <button onClick={() => call('stop')}>{t('m.stop')}</button>
            <button class="danger" onClick={() => call('clear')}>
              {t('m.clear')}
            </button>
          </div>
        </div>
      </Show>
    </div>
  );
}
