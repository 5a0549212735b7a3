// The selected entries of a folder and the keyboard cursor. Shift-click selects a range.
import { batch, createSignal } from 'solid-js';
import type { Obj } from '../../api';

export function createSelection(items: () => Obj[]) {
  const [selected, setSelected] = createSignal(new Set<string>());
  const [cursor, setCursor] = createSignal(0);
  // the keyboard cursor shows once a key moved it, not on page load (where it looks like a selection)
  const [keyed, setKeyed] = createSignal(false);
  /** Shift-click selects the range from the entry clicked before to this one. */
  let anchor = -1;
  const toggle = (name: string) =>
    setSelected((s) => {
      const n = new Set(s);
      if (n.has(name)) n.delete(name);
      else n.add(name);
      return n;
    });
  const clickSelect = (e: MouseEvent, name: string) => {
    const list = items();
    const i = list.findIndex((o) => o.name === name);
    if (e.shiftKey && anchor >= 0 && i >= 0) {
      e.preventDefault();
      const [from, to] = anchor < i ? [anchor, i] : [i, anchor];
      setSelected((s) => new Set([...s, ...list.slice(from, to + 1).map((o) => o.name)]));
    } else toggle(name);
    anchor = i;
  };
  const objs = () => items().filter((o) => selected().has(o.name));
  return {
    selected,
    cursor,
    keyed,
    toggle,
    clickSelect,
    /** Selects exactly these names (none: clears the selection). */
    select: (names: string[]) => setSelected(new Set(names)),
    clear: () => setSelected(new Set<string>()),
    /** Back to nothing selected and the cursor on the first entry (another folder). */
    reset: () => (setSelected(new Set<string>()), setCursor(0)),
    names: () => [...selected()],
    objs,
    /** The cursor moves to entry `i` and shows. */
    moveTo: (i: number) => batch(() => (setCursor(i), setKeyed(true))),
    /** The cursor shows where it is. */
    show: () => setKeyed(true),
    /** What a context menu on `name` acts on: the selection when it holds the entry, else the entry alone (the selection is left as it is). */
    targetsOf: (name: string): Obj[] => {
      if (selected().has(name)) return objs();
      const o = items().find((x) => x.name === name);
      return o ? [o] : [];
    },
  };
}

export type Selection = ReturnType<typeof createSelection>;
