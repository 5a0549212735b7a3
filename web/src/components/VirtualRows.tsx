// Renders only the rows near the viewport of a window-scrolled list, so a folder of 100 000
// entries costs as much DOM as one of fifty.
import { createEffect, createSignal, Index, type JSX, onCleanup, onMount } from 'solid-js';

const OVERSCAN = 8;

/** `role` is the container's (a grid's "rowgroup"); the positioning boxes around the rows then have none. */
export default function VirtualRows(props: { count: number; rowHeight: number; children: (row: () => number) => JSX.Element; class?: string; role?: 'rowgroup' }) {
  let el!: HTMLDivElement;
  const [range, setRange] = createSignal<[number, number]>([0, 40]);
  let frame = 0;
  const update = () => {
    frame = 0;
    const top = Math.max(0, -el.getBoundingClientRect().top);
    const start = Math.max(0, Math.floor(top / props.rowHeight) - OVERSCAN);
    const end = Math.min(props.count, Math.ceil((top + window.innerHeight) / props.rowHeight) + OVERSCAN);
    const [s, e] = range();
    if (s !== start || e !== end) setRange([start, end]);
  };
  const schedule = () => {
    if (!frame) frame = requestAnimationFrame(update);
  };
  onMount(() => {
    window.addEventListener('scroll', schedule, { passive: true });
    window.addEventListener('resize', schedule, { passive: true });
    update();
  });
  onCleanup(() => {
    window.removeEventListener('scroll', schedule);
    window.removeEventListener('resize', schedule);
    cancelAnimationFrame(frame);
  });
  createEffect(() => {
    void props.count;
    void props.rowHeight;
    queueMicrotask(update);
  });
  const rows = () => {
    const [s, e] = range();
    const out: number[] = [];
    for (let i = s; i < Math.min(e, props.count); i++) out.push(i);
    return out;
  };
  return (
    <div ref={el} class={props.class} role={props.role} style={{ position: 'relative', height: `${props.count * props.rowHeight}px` }}>
      <Index each={rows()}>
        {(row) => (
          <div role={props.role ? 'none' : undefined} style={{ position: 'absolute', left: 0, right: 0, top: `${row() * props.rowHeight}px`, height: `${props.rowHeight}px` }}>
            {props.children(row)}
          </div>
        )}
      </Index>
    </div>
  );
}
