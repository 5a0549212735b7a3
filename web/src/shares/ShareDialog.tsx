// "Share": a dialog that creates a link to the selected files (expiry, code, limit), then shows it to copy.
import { createSignal, Show } from 'solid-js';
import { joinPath } from '../api';
import { showDialog } from '../components/Dialog';
import { copyText } from '../components/fileOps';
import { t } from '../i18n';
import { can, me, notify, notifyError } from '../state';
import { createShare, shareMessage, shareUrl } from './api';

/** The absolute virtual path of an entry the user sees at `dir` (their base path in front). */
function virtualPath(dir: string, name: string): string {
  const base = (me()?.base_path ?? '/').replace(/\/+$/, '');
  const inside = joinPath(dir, name);
  return base === '' ? inside : `${base}${inside === '/' ? '' : inside}`;
}

export async function shareSelection(dir: string, names: string[]): Promise<void> {
  await showDialog<void>(t('share.create_title', { n: names.length }), (close) => {
    const [expires, setExpires] = createSignal('');
    const [pwd, setPwd] = createSignal('');
    const [limit, setLimit] = createSignal('0');
    const [remark, setRemark] = createSignal('');
    const [id, setId] = createSignal('');
    const [header, setHeader] = createSignal('');
    const [readme, setReadme] = createSignal('');
    const [link, setLink] = createSignal('');
    const [message, setMessage] = createSignal('');
    const [busy, setBusy] = createSignal(false);
    const submit = async (e: Event) => {
      e.preventDefault();
      setBusy(true);
      try {
        const share = await createShare({
          files: names.map((n) => virtualPath(dir, n)),
          expires: expires() ? new Date(expires()).toISOString() : null,
          pwd: pwd(),
          max_accessed: Math.max(0, Number.parseInt(limit(), 10) || 0),
          remark: remark(),
          id: can(15) ? id().trim() : '',
          header: header(),
          readme: readme(),
        });
        setLink(shareUrl(share.id));
        setMessage(shareMessage(share));
        notify(t('share.created'));
      } catch (err) {
        notifyError(err);
      } finally {
        setBusy(false);
      }
    };
    return (
      <Show
        when={link()}
        fallback={
          <form onSubmit={submit}>
            <label>
              {t('share.expires')}
              <input type="datetime-local" name="expires" value={expires()} onInput={(e) => setExpires(e.currentTarget.value)} />
            </label>
            <label>
              {t('share.password')}
              <input name="pwd" value={pwd()} onInput={(e) => setPwd(e.currentTarget.value)} autocomplete="off" />
            </label>
            <label>
              {t('share.limit')}
              <input type="number" min="0" name="max_accessed" value={limit()} onInput={(e) => setLimit(e.currentTarget.value)} />
            </label>
            <label>
              {t('share.remark')}
              <input name="remark" value={remark()} onInput={(e) => setRemark(e.currentTarget.value)} />
            </label>
            <Show when={can(15)}>
              <label>
                {t('share.custom_id')}
                <input name="id" value={id()} onInput={(e) => setId(e.currentTarget.value)} autocomplete="off" />
                <span class="help">{t('share.custom_id_hint')}</span>
              </label>
            </Show>
            <label>
              {t('share.header')}
              <textarea name="header" rows={2} value={header()} onInput={(e) => setHeader(e.currentTarget.value)} />
            </label>
            <label>
              {t('share.readme')}
              <textarea name="readme" rows={3} value={readme()} onInput={(e) => setReadme(e.currentTarget.value)} />
              <span class="help">{t('share.markdown_hint')}</span>
            </label>
            <div class="actions">
              <button type="button" onClick={() => close()}>{t('cancel')}</button>
              <button type="submit" class="primary" disabled={busy()}>{t('share.create')}</button>
            </div>
          </form>
        }
      >
        <label>
          {t('share.link')}
          <input readOnly value={link()} data-testid="share-link" onFocus={(e) => e.currentTarget.select()} />
        </label>
        <label>
          {t('share.message')}
          <textarea readOnly rows={3} value={message()} data-testid="share-message" onFocus={(e) => e.currentTarget.select()} />
        </label>
        <div class="actions">
          <button type="button" onClick={() => void copyText(link())}>{t('share.copy')}</button>
          <button type="button" onClick={() => void copyText(message())}>{t('share.copy_msg')}</button>
          <button type="button" class="primary" onClick={() => close()}>{t('close')}</button>
        </div>
      </Show>
    );
  });
}
