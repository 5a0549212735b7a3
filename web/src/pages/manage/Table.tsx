// The building blocks every manage list shares: a heading with its buttons, and a table.
import { createEffect, For, type JSX } from 'solid-js';
import { confirmAction } from '../../components/Dialog';
import { t } from '../../i18n';

export function PageHead(props: { title: string; children?: JSX.Element }) {
  return (
    <div class="section-head">
      <h1>{props.title}</h1>
      <span class="grow" />
      {props.children}
    </div>
  );
}

/** A table of `rows`; `children` renders one row's <tr>. */
export function DataTable<T>(props: { columns: string[]; rows: readonly T[] | null | undefined; children: (row: T) => JSX.Element }) {
  // At phone width every row is a card and each cell names its column (CSS reads data-label).
  let body!: HTMLTableSectionElement;
  createEffect(() => {
    void props.rows;
    queueMicrotask(() => {
      for (const tr of body.rows) [...tr.cells].forEach((td, i) => td.colSpan === 1 && props.columns[i] && (td.dataset.label = props.columns[i]));
    });
  });
  return (
    <div class="table-wrap">
      <table class="data">
        <thead>
          <tr>
            {/* a column without a title (a row's buttons) is named for screen readers */}
            <For each={props.columns}>{(c) => <th>{c || <span class="sr-only">{t('actions')}</span>}</th>}</For>
          </tr>
        </thead>
        <tbody ref={body}>
          <For
            each={props.rows ?? []}
            fallback={
              <tr>
                <td colspan={props.columns.length} class="muted">
                  —
                </td>
              </tr>
            }
          >
            {props.children}
          </For>
        </tbody>
      </table>
    </div>
  );
}

/** A row's Delete button: asks first, naming the row, then runs `onDelete`. */
export function DeleteButton(props: { name: string; onDelete: () => unknown; disabled?: boolean }) {
  return (
    <button class="small danger" disabled={props.disabled ?? false} onClick={async () => (await confirmAction(t('delete'), `${t('delete')} ${props.name}?`)) && props.onDelete()}>
      {t('delete')}
    </button>
  );
}
