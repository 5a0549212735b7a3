// One card of the current user's credentials (SSH keys, S3 access keys, app passwords, passkeys): a heading, a table with a delete button per row, and the card's own way to add one.
import { createResource, type JSX } from 'solid-js';
import { act } from '../../actions';
import { DataTable, DeleteButton } from './Table';

export function KeyCard<T>(props: {
  testid: string;
  title: string;
  help?: string;
  load: () => Promise<readonly T[]>;
  /** A list that fails to load shows as empty instead of raising the page's error. */
  emptyOnError?: boolean;
  /** Column headings; the delete button's empty one follows. */
  columns: string[];
  /** The row's cells before the delete button. */
  cells: (row: T) => JSX.Element;
  /** What the delete question names the row by. */
  name: (row: T) => string;
  revoke: (row: T) => Promise<unknown>;
  /** The way to add one; `refetch` reloads the table. */
  children: (refetch: () => unknown) => JSX.Element;
}) {
  const [list, { refetch }] = createResource(props.load);
  return (
    <div class="card" style={{ 'margin-top': '16px' }} data-testid={props.testid}>
      <h2>{props.title}</h2>
      {props.help && <p class="muted">{props.help}</p>}
      <DataTable columns={[...props.columns, '']} rows={props.emptyOnError && list.state === 'errored' ? [] : (list() ?? [])}>
        {(row) => (
          <tr>
            {props.cells(row)}
            <td>
              <DeleteButton name={props.name(row)} onDelete={async () => (await act(() => props.revoke(row))) && refetch()} />
            </td>
          </tr>
        )}
      </DataTable>
      {props.children(refetch)}
    </div>
  );
}

/** A card's add form: on success the form clears and `done` gets what the server answered. */
export function KeyForm<R>(props: { create: (data: Record<string, string>) => Promise<R>; done: (made: R) => unknown; submit: string; children: JSX.Element }) {
  return (
    <form
      style={{ 'margin-top': '12px' }}
      onSubmit={async (e) => {
        e.preventDefault();
        const el = e.currentTarget;
        const data = Object.fromEntries(new FormData(el)) as Record<string, string>;
        let made: R | undefined;
        if (await act(async () => (made = await props.create(data)))) {
          el.reset();
          props.done(made as R);
        }
      }}
    >
      {props.children}
      <div class="actions">
        <button type="submit">{props.submit}</button>
      </div>
    </form>
  );
}
