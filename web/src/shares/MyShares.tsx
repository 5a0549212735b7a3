// "My shares" (the admin sees everyone's): each link with its files, accesses and expiry, to
// copy, enable or disable, and delete.
import { createResource, For, Show } from 'solid-js';
import { act } from '../actions';
import { confirmAction } from '../components/Dialog';
import { copyText } from '../components/fileOps';
import { formatDate } from '../format';
import { t } from '../i18n';
import { DataTable, PageHead } from '../pages/manage/Table';
import { deleteShare, listShares, setShareDisabled, shareMessage, shareUrl, type Share } from './api';

export default function MyShares() {
  const [shares, { refetch }] = createResource(async () => (await listShares()).content ?? []);
  const toggle = (s: Share) => act(() => setShareDisabled(s.id, !s.disabled), refetch);
  const remove = async (s: Share) => {
    if (await confirmAction(t('delete'), t('share.delete_confirm', { id: s.id }))) await act(() => deleteShare(s.id), refetch);
  };
  return (
    <div data-testid="my-shares">
      <PageHead title={t('share.mine')}>
        <button onClick={() => void refetch()}>{t('refresh')}</button>
      </PageHead>
      <Show when={(shares() ?? []).length > 0 || shares.loading} fallback={<p class="muted">{t('share.none')}</p>}>
        <DataTable columns={[t('share.link'), t('share.files'), t('share.accessed'), t('share.expires'), '']} rows={shares()}>
          {(s) => (
            <tr classList={{ muted: s.disabled }} data-share={s.id}>
              <td>
                <a href={shareUrl(s.id)} target="_blank" rel="noopener">
                  {s.id}
                </a>
                <Show when={s.disabled}> ({t('m.disabled')})</Show>
              </td>
              <td>
                <For each={s.files}>{(f) => <div>{f}</div>}</For>
              </td>
              <td>
                {s.accessed}
                {s.max_accessed > 0 ? ` / ${s.max_accessed}` : ''}
              </td>
              <td>{s.expires ? formatDate(s.expires) : t('share.never')}</td>
              <td class="row-actions">
                <button onClick={() => void copyText(shareUrl(s.id))}>{t('share.copy')}</button>
                <button onClick={() => void copyText(shareMessage(s))}>{t('share.copy_msg')}</button>
                <button onClick={() => void toggle(s)}>{s.disabled ? t('share.enable') : t('share.disable')}</button>
                <button class="danger" onClick={() => void remove(s)}>
                  {t('delete')}
                </button>
              </td>
            </tr>
          )}
        </DataTable>
      </Show>
    </div>
  );
}
