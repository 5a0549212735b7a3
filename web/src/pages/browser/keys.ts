// The browser's keys on a folder: arrows move the cursor (by rows in the grid), Enter opens,
// Space selects, Shift+F10 / the menu key opens the context menu, Delete, F2, Ctrl+A, Escape,
// Backspace to the parent folder.
import { onCleanup, onMount } from 'solid-js';
import { type Obj, parentOf } from '../../api';
import { remove, rename } from '../../components/fileOps';
import { navigate } from '../../router';
import { can } from '../../state';
import { CELL, layout, ROW } from './layout';
import type { Selection } from './selection';

export interface KeyContext {
  path: () => string;
  isFolder: () => boolean;
  items: () => Obj[];
  selection: Selection;
  menuFor: (name: string, x: number, y: number) => void;
  open: (o: Obj) => void;
  after: (ok: boolean) => void;
}

/** Listens to the document's keys while the browser is mounted. */
export function useBrowserKeys(ctx: KeyContext): void {
  const onKey = (e: KeyboardEvent) => keyDown(ctx, e);
  onMount(() => document.addEventListener('keydown', onKey));
  onCleanup(() => document.removeEventListener('keydown', onKey));
}

function keyDown({ path, isFolder, items, selection: sel, menuFor, open, after }: KeyContext, e: KeyboardEvent): void {
  if (!isFolder() || (e.target as HTMLElement).closest('input:not([type=checkbox]), textarea, select, .dialog, .backdrop, .context-menu')) return;
  const list = items();
  const cur = list[sel.cursor()];
  const grid = layout() === 'grid';
  const step = grid ? Math.max(1, Math.floor(document.querySelector('.grid')?.clientWidth ?? CELL) / CELL | 0) : 1;
  const moveTo = (i: number) => {
    const n = Math.max(0, Math.min(list.length - 1, i));
    sel.moveTo(n);
    const el = document.querySelector('.virtual');
    if (el) {
      const top = el.getBoundingClientRect().top + window.scrollY + Math.floor(n / step) * (grid ? CELL + 40 : ROW);
      if (top < window.scrollY + 80 || top > window.scrollY + window.innerHeight - ROW) window.scrollTo({ top: top - window.innerHeight / 2 });
    }
    e.preventDefault();
  };
  if (e.key === 'ArrowDown') moveTo(sel.cursor() + step);
  else if (e.key === 'ArrowUp') moveTo(sel.cursor() - step);
  else if (e.key === 'ArrowRight' && grid) moveTo(sel.cursor() + 1);
  else if (e.key === 'ArrowLeft' && grid) moveTo(sel.cursor() - 1);
  else if (((e.key === 'F10' && e.shiftKey) || e.key === 'ContextMenu') && cur) {
    e.preventDefault();
    sel.show();
    const el = document.querySelector(`[data-name="${CSS.escape(cur.name)}"]`)?.getBoundingClientRect();
    menuFor(cur.name, el ? el.left + 40 : 40, el ? el.bottom : 80);
  } else if (e.key === 'Enter' && cur) open(cur);
  else if (e.key === 'Escape' && sel.selected().size) sel.clear();
  else if (e.key === ' ' && cur && !(e.target instanceof HTMLInputElement)) {
    sel.toggle(cur.name);
    e.preventDefault();
  } else if (e.key === 'Backspace' && path() !== '/') navigate(parentOf(path()));
  else if (e.key === 'Delete' && can(7)) {
    const names = sel.selected().size ? sel.names() : cur ? [cur.name] : [];
    if (names.length) void remove(path(), names).then(after);
  } else if (e.key === 'F2' && cur && can(4)) void rename(path(), cur).then(after);
  else if (e.key === 'a' && (e.ctrlKey || e.metaKey)) {
    sel.select(list.map((o) => o.name));
    e.preventDefault();
  }
}
