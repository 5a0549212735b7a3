// One context menu at a time, opened at a point (right click, long press) or under the keyboard
// cursor (Shift+F10, the Menu key). It is a real menu: arrow keys, Home/End, Enter, Escape, and
// focus goes back to where it was when it closes.
import { createSignal, For, onCleanup, onMount, Show } from 'solid-js';

export interface MenuItem {
  id: string;
  label: string;
  run: () => unknown;
  danger?: boolean;
}

const [menu, setMenu] = createSignal<{ x: number; y: number; items: MenuItem[]; label: string; back: Element | null } | undefined>();

export function openMenu(x: number, y: number, label: string, items: MenuItem[]): void {
  if (items.length) setMenu({ x, y, items, label, back: document.activeElement });
}

function closeMenu(refocus = true) {
  const m = menu();
  setMenu(undefined);
  if (refocus && m?.back instanceof HTMLElement) m.back.focus({ preventScroll: true });
}

/** Long press on touch screens: fires `onPress` after 500 ms without the finger moving away. */
export function longPress(el: HTMLElement, onPress: (target: HTMLElement, x: number, y: number) => void): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let start = { x: 0, y: 0 };
  const cancel = () => timer && (clearTimeout(timer), (timer = undefined));
  const down = (e: PointerEvent) => {
    if (e.pointerType !== 'touch') return;
    start = { x: e.clientX, y: e.clientY };
    const target = e.target as HTMLElement;
    timer = setTimeout(() => {
      timer = undefined;
      onPress(target, start.x, start.y);
    }, 500);
  };
  const move = (e: PointerEvent) => Math.hypot(e.clientX - start.x, e.clientY - start.y) > 10 && cancel();
  el.addEventListener('pointerdown', down);
  el.addEventListener('pointermove', move);
  el.addEventListener('pointerup', cancel);
  el.addEventListener('pointercancel', cancel);
  return () => {
    cancel();
    el.removeEventListener('pointerdown', down);
    el.removeEventListener('pointermove', move);
    el.removeEventListener('pointerup', cancel);
    el.removeEventListener('pointercancel', cancel);
  };
}

export function ContextMenuHost() {
  let el: HTMLDivElement | undefined;
  const buttons = () => [...(el?.querySelectorAll<HTMLButtonElement>('[role=menuitem]') ?? [])];
  const focusAt = (i: number) => {
    const list = buttons();
    list[(i + list.length) % list.length]?.focus();
  };
  const onKey = (e: KeyboardEvent) => {
    if (!menu()) return;
    const i = buttons().indexOf(document.activeElement as HTMLButtonElement);
    const keys: Record<string, () => void> = {
      Escape: () => closeMenu(),
      Tab: () => closeMenu(),
      ArrowDown: () => focusAt(i + 1),
      ArrowUp: () => focusAt(i - 1),
      Home: () => focusAt(0),
      End: () => focusAt(-1),
    };
    const act = keys[e.key];
    if (!act) return;
    e.preventDefault();
    e.stopImmediatePropagation();
    act();
  };
  const onDown = (e: Event) => menu() && !el?.contains(e.target as Node) && closeMenu(false);
  onMount(() => {
    document.addEventListener('keydown', onKey, true);
    document.addEventListener('pointerdown', onDown, true);
    window.addEventListener('blur', () => closeMenu(false));
    window.addEventListener('resize', () => closeMenu(false));
  });
  onCleanup(() => {
    document.removeEventListener('keydown', onKey, true);
    document.removeEventListener('pointerdown', onDown, true);
  });
  return (
    <Show when={menu()}>
      {(m) => (
        <div
          ref={(d) => {
            el = d;
            // keep the menu on screen, then focus its first item
            queueMicrotask(() => {
              const r = d.getBoundingClientRect();
              d.style.left = `${Math.max(4, Math.min(m().x, innerWidth - r.width - 4))}px`;
              d.style.top = `${Math.max(4, Math.min(m().y, innerHeight - r.height - 4))}px`;
              focusAt(0);
            });
          }}
          class="context-menu"
          role="menu"
          aria-label={m().label}
          data-testid="context-menu"
          style={{ left: `${m().x}px`, top: `${m().y}px` }}
          onContextMenu={(e) => e.preventDefault()}
        >
          <For each={m().items}>
            {(item) => (
              <button
                type="button"
                role="menuitem"
                tabindex="-1"
                classList={{ danger: !!item.danger }}
                data-action={item.id}
                onClick={() => {
                  closeMenu();
                  void item.run();
                }}
              >
                {item.label}
              </button>
            )}
          </For>
        </div>
      )}
    </Show>
  );
}
