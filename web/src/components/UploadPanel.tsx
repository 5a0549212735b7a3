import Icon from './Icon';
import { For, Show } from 'solid-js';
import { formatSize } from '../format';
import { t } from '../i18n';
import { cancel, clearFinished, setUploads, totals, uploads } from '../uploads';

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
          <button class="small" onClick={clearFinished} disabled={totals().active && uploads.items.every((i) => i.status === 'uploading' || i.status === 'queued')}>
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
                    : item.status === 'failed'
                      ? `${t('upload.failed')}: ${item.error}`
                      : t(`upload.${item.status === 'done' ? 'done' : item.status === 'queued' ? 'queued' : 'canceled'}`)}
                </span>
                <Show when={item.status === 'uploading' || item.status === 'queued'}>
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
