// A QR code of a link, drawn as SVG by the qrcode package (loaded with this dialog only).
import { createResource, Show } from 'solid-js';
import { t } from '../i18n';
import { showDialog } from './Dialog';
import { copyText } from './fileOps';

export function showQr(title: string, link: string): Promise<unknown> {
  return showDialog(title, (done) => {
    const [svg] = createResource(async () => (await import('qrcode')).toString(link, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' }));
    return (
      <div class="qr">
        <Show when={svg()} fallback={<p class="muted">{t('loading')}</p>}>
          <div class="qr-code" role="img" aria-label={t('qr.of', { name: title })} data-testid="qr" innerHTML={svg()} />
        </Show>
        <input readonly value={link} aria-label={t('copy_link')} onFocus={(e) => e.currentTarget.select()} />
        <div class="actions">
          <button type="button" onClick={() => void copyText(link)}>
            {t('copy_link')}
          </button>
          <button type="button" class="primary" onClick={() => done()}>
            {t('close')}
          </button>
        </div>
      </div>
    );
  });
}
