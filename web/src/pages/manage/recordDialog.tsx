import type { JSX } from 'solid-js';
import { createStore } from 'solid-js/store';
import { showDialog } from '../../components/Dialog';
import { t } from '../../i18n';
import type { FieldSpec } from './Field';
import FieldGroups from './FieldGroups';

/** A dialog editing a flat record of string values; resolves with the values, or undefined. */
export function recordDialog(title: string, fields: FieldSpec[], initial: Record<string, string>, extra?: (values: Record<string, string>, set: (k: string, v: string) => void) => JSX.Element) {
  return showDialog<Record<string, string>>(title, (done) => {
    const [values, setValues] = createStore<Record<string, string>>({ ...initial });
    return (
      <form
        onSubmit={(e) => {
          e.preventDefault();
          done({ ...values });
        }}
      >
        <FieldGroups fields={fields} values={values} set={(k, v) => setValues(k, v)} />
        {extra?.(values, (k, v) => setValues(k, v))}
        <div class="actions">
          <button type="button" onClick={() => done()}>
            {t('cancel')}
          </button>
          <button type="submit" class="primary">
            {t('save')}
          </button>
        </div>
      </form>
    );
  });
}

export const bool = (v: string | undefined) => v === 'true';
