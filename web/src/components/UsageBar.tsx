// The signed-in user's storage against their quota (docs/access-and-security.md, quotas): bytes
// used of the byte quota and files of the file quota, each a bar, from GET /api/me (which
// carries used_* only while a quota is set). Nothing without a quota. The profile shows it in a
// card; the file browser a compact one under the folder, read again with each listing.
import { createResource, Show } from 'solid-js';
import { api, type User } from '../api';
import { formatSize } from '../format';
import { t } from '../i18n';
import { me } from '../state';

const hasQuota = (u: User | undefined) => !!u && (u.quota_bytes > 0 || u.quota_files > 0);

export default function UsageBar(props: { compact?: boolean; /** read again whenever this changes */ version?: unknown }) {
  // fetched only for a user the session knows to have a quota
  const [fresh] = createResource(
    () => (hasQuota(me()) ? { v: props.version } : false),
    () => api<User>('/me').catch(() => undefined),
  );
  const u = () => fresh.latest;
  const bytesText = (x: User) => t('usage.bytes', { used: formatSize(x.used_bytes ?? 0), quota: formatSize(x.quota_bytes) });
  const filesText = (x: User) => t('usage.files', { used: x.used_files ?? 0, quota: x.quota_files });
  return (
    <Show when={hasQuota(u()) && u()}>
      {(x) => (
        <div class="usage" classList={{ card: !props.compact, compact: !!props.compact }} data-testid={props.compact ? 'usage-compact' : 'usage'}>
          <Show when={!props.compact} fallback={<span class="usage-title">{t('usage.title')}</span>}>
            <h2>{t('usage.title')}</h2>
          </Show>
          <Show when={x().quota_bytes > 0}>
            <div class="usage-line">
              <span data-testid="usage-bytes-text">{bytesText(x())}</span>
              <progress data-testid="usage-bytes" max={x().quota_bytes} value={Math.min(x().used_bytes ?? 0, x().quota_bytes)} aria-label={t('usage.title')} aria-valuetext={bytesText(x())} />
            </div>
          </Show>
          <Show when={x().quota_files > 0}>
            <div class="usage-line">
              <span data-testid="usage-files-text">{filesText(x())}</span>
              <progress data-testid="usage-files" max={x().quota_files} value={Math.min(x().used_files ?? 0, x().quota_files)} aria-label={t('usage.title')} aria-valuetext={filesText(x())} />
            </div>
          </Show>
        </div>
      )}
    </Show>
  );
}
