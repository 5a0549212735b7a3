// How a folder is shown: the layout (list, grid or photo wall, remembered in localStorage) and
// the order of its entries. Both are kept across folders, for the whole page.
import { createSignal } from 'solid-js';
import type { Obj } from '../../api';
import { compareNames } from '../../format';

export const ROW = 44;
export const CELL = 150;
export const WALL_HEIGHT = 180;

export type SortKey = 'name' | 'size' | 'modified';
export type Layout = 'list' | 'grid' | 'wall';

export const [layout, setLayout] = createSignal<Layout>((localStorage.getItem('view') as Layout) ?? 'list');
export const [sort, setSort] = createSignal<{ key: SortKey; asc: boolean }>({ key: 'name', asc: true });

/** Shows the folder as `to` and remembers it for the next visit. */
export function chooseLayout(to: Layout): void {
  setLayout(to);
  localStorage.setItem('view', layout());
}

/** The entries in the chosen order: folders first, then by the sort key, ties by name. */
export function sortEntries(list: Obj[]): Obj[] {
  const { key, asc } = sort();
  const dir = asc ? 1 : -1;
  return list.sort((a, b) => {
    if (a.is_dir !== b.is_dir) return a.is_dir ? -1 : 1;
    const c = key === 'name' ? compareNames(a.name, b.name) : key === 'size' ? a.size - b.size : Date.parse(a.modified) - Date.parse(b.modified);
    return c * dir || compareNames(a.name, b.name);
  });
}
