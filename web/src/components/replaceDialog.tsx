// Asked before an upload would replace a file: replace it or keep it, for this file or for all
// of the files still to come in this batch.
import { createSignal } from 'solid-js';
import { t } from '../i18n';
import { showDialog } from './Dialog';

export type ReplaceChoice = 'replace' | 'skip';

export function askReplace(name: string, others: number): Promise<{ choice: ReplaceChoice; all: boolean }> {
  return showDialog<{ choice: ReplaceChoice; all: boolean }>(t('replace.title'), (done) => {
    const [all, setAll] = createSignal(false);
    return (
      <div data-testid="replace-dialog">
        <p>{t('replace.text', { name })}</p>
        {others > 0 && (
          <label class="check">
            <input type="checkbox" name="all" checked={all()} onChange={(e) => setAll(e.currentTarget.checked)} /> {t('replace.all', { n: others })}
          </label>
        )}
        <div class="actions">
          <button type="button" ref={(el) => setTimeout(() => el.focus())} onClick={() => done({ choice: 'skip', all: all() })}>
            {t('replace.skip')}
          </button>
          <button type="button" class="danger" onClick={() => done({ choice: 'replace', all: all() })}>
            {t('replace.replace')}
          </button>
        </div>
      </div>
    );
  }).then((v) => v ?? { choice: 'skip', all: false });
}
