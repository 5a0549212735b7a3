// A manage page over one kind of record at `route` (list, create, update, delete): a heading with an Add button, and a table whose rows carry Edit, their own buttons, and Delete (asked first).
import { createResource, type JSX } from 'solid-js';
import { act } from '../../actions';
import { api } from '../../api';
import { t } from '../../i18n';
import { DataTable, DeleteButton, PageHead } from './Table';

/** Calls one route of the list, then reloads it. */
export type ListCall = (route: string, body?: unknown) => Promise<void>;

export function RecordList<T extends { id: number }>(props: {
  title: string;
  /** e.g. '/admin/meta': `${route}/list`, `${route}/create`, `${route}/update`, `${route}/delete?id=`. */
  route: string;
  /** Column headings; the buttons' empty one follows. */
  columns: string[];
  /** The row's cells before its buttons. */
  cells: (row: T) => JSX.Element;
  /** What the delete question names the row by. */
  name: (row: T) => string;
  /** Asks for the record (a new one without `row`); resolves with the body to save, or undefined when cancelled. */
  edit: (row?: T) => Promise<Record<string, unknown> | undefined>;
  /** Buttons between Edit and Delete. */
  buttons?: (row: T, call: ListCall) => JSX.Element;
  canDelete?: (row: T) => boolean;
}) {
  const [list, { refetch }] = createResource(() => api<{ content: T[] | null }>(`${props.route}/list?page=1&per_page=1000`));
  const call: ListCall = async (route, body = {}) => {
    await act(() => api(route, body), refetch);
  };
  const edit = async (row?: T) => {
    const body = await props.edit(row);
    if (body) await call(`${props.route}/${row ? 'update' : 'create'}`, body);
  };
  return (
    <div>
      <PageHead title={props.title}>
        <button class="primary" onClick={() => edit()}>
          {t('add')}
        </button>
      </PageHead>
      <DataTable columns={[...props.columns, '']} rows={list()?.content ?? []}>
        {(row) => (
          <tr>
            {props.cells(row)}
            <td class="actions-cell">
              <button class="small" onClick={() => edit(row)}>
                {t('edit')}
              </button>
              {props.buttons?.(row, call)}
              <DeleteButton name={props.name(row)} disabled={props.canDelete ? !props.canDelete(row) : false} onDelete={() => call(`${props.route}/delete?id=${row.id}`)} />
            </td>
          </tr>
        )}
      </DataTable>
    </div>
  );
}
