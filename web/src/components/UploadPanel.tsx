import Icon from './Icon';
import { For, Show } from 'solid-js';
import { formatSize } from '../format';
import { type MessageKey, t } from '../i18n';
import { formatDuration, formatSpeed, timeLeft } from '../rate';
import { cancel, clearFinished, setUploads, togglePause, totals, uploads } from '../uploads';

const UPLOAD_STATUS: Partial<Record<string, MessageKey>> = { done: 'upload.done', queued: 'upload.queued', checking: 'upload.queued', canceled: 'upload.canceled', skipped: 'upload.skipped' };
const pct = (a: number, b: number) => (b > 0 ? Math.min(100, Math.round((a / b) * 100)) : 100);

export default function UploadPanel() {
  return (
    <Show when={uploads.items.length > 0}>
      <section class="uploads" aria-label={t('upload')}>
        <div class="uploads-head">
          <strong>{t('upload')}</strong>
          <span class="total" data-testid="upload-total">
            {t('upload.total')}: {pct(totals().loaded, totals().size)}% ({formatSize(totals().loaded)} / {formatSize(totals().size)})
          </span>
          <Show when={totals().active}>
            <span class="muted" data-testid="upload-speed">
              {formatSpeed(totals().speed, formatSize)} · {t('time_left', { time: formatDuration(totals().left) })}
            </span>
          </Show>
          <button class="small" onClick={clearFinished} disabled={totals().active && uploads.items.every((i) => i.status === 'uploading' || i.status === 'queued' || i.status === 'checking')}>
            {t('upload.clear')}
          </button>
        </div>
        <progress class="bar" max={100} value={pct(totals().loaded, totals().size)} />
        <ul>
          <For each={uploads.items}>
            {(item) => (
              <li class={`upload ${item.status}`} data-testid="upload-item">
                <span class="name" title={item.target}>
                  {item.name}
                </span>
                <progress max={100} value={pct(item.loaded, item.size)} />
                <span class="status">
                  {item.status === 'uploading'
                    ? `${pct(item.loaded, item.size)}%`
                    : item.status === 'paused'
                      ? `${t('upload.paused')} ${pct(item.loaded, item.size)}%`
                    : item.status === 'failed'
                      ? `${t('upload.failed')}: ${item.error}`
                      : t(UPLOAD_STATUS[item.status] ?? 'upload.queued')}
                </span>
                {/* bytes sent so far (XHR upload progress, inside each chunk too), the speed and the time left */}
                <Show when={item.status === 'uploading' || item.status === 'paused'}>
                  <span class="detail muted" data-testid="upload-detail">
                    {formatSize(item.loaded)} / {formatSize(item.size)}
                    <Show when={item.status === 'uploading'}>
                      {' · '}
                      {formatSpeed(item.speed, formatSize)} · {t('time_left', { time: formatDuration(timeLeft(item.size - item.loaded, item.speed)) })}
                    </Show>
                  </span>
                </Show>
                <Show when={item.chunked && (item.status === 'uploading' || item.status === 'paused')}>
                  <button class="small" data-testid="upload-pause" onClick={() => togglePause(item.id)}>
                    {item.status === 'paused' ? t('upload.resume') : t('upload.pause')}
                  </button>
                </Show>
                <Show when={item.status === 'uploading' || item.status === 'queued' || item.status === 'checking' || item.status === 'paused'}>
                  <button class="icon" aria-label={t('cancel')} title={t('cancel')} onClick={() => cancel(item.id)}>
                    <Icon name="close" size={14} />
                  </button>
                </Show>
              </li>
            )}
          </For>
        </ul>
      </section>
    </Show>
  );
}

/** The as-task and overwrite switches, shown next to the upload buttons. */
export function UploadOptions() {
  return (
    <span class="upload-options">
      <label>
        <input type="checkbox" checked={uploads.asTask} onChange={(e) => setUploads('asTask', e.currentTarget.checked)} /> {t('upload.as_task')}
      </label>
      <label>
        <input type="checkbox" checked={uploads.overwrite} onChange={(e) => setUploads('overwrite', e.currentTarget.checked)} /> {t('upload.overwrite')}
      </label>
    </span>
  );
}
