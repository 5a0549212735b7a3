// The building blocks every manage list shares: a heading with its buttons, and a table.
import { For, type JSX } from 'solid-js';

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
  return (
    <div class="table-wrap">
      <table class="data">
        <thead>
          <tr>
            <For each={props.columns}>{(c) => <th>{c}</th>}</For>
          </tr>
        </thead>
        <tbody>
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
