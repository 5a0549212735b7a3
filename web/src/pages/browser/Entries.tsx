// A folder's entries as a list, a grid of thumbnails or a photo wall; a right click or a long
// press on one opens its context menu.
import { createSignal, For, onCleanup, onMount, Show } from 'solid-js';
import { joinPath, type Obj, rawLink } from '../../api';
import { longPress } from '../../components/ContextMenu';
import Icon from '../../components/Icon';
import { iconOf, TYPE } from '../../components/icons';
import VirtualRows from '../../components/VirtualRows';
import { formatDate, formatSize } from '../../format';
import { t } from '../../i18n';
import { href, linkClick } from '../../router';
import { isSharePath } from '../../shares/api';
import { CELL, type Layout, ROW, type SortKey, setSort, sort, WALL_HEIGHT } from './layout';
import type { Selection } from './selection';

const entryAt = (el: EventTarget | null) => (el as HTMLElement | null)?.closest<HTMLElement>('[data-name]') ?? undefined;

export default function Entries(props: { path: string; items: Obj[]; layout: Layout; selection: Selection; menuFor: (name: string, x: number, y: number) => void }) {
  const sel = props.selection;
  const onContextMenu = (e: MouseEvent) => {
    const entry = entryAt(e.target);
    if (!entry) return;
    e.preventDefault();
    props.menuFor(entry.dataset.name!, e.clientX, e.clientY);
  };
  return (
    <div class="entries" ref={(el) => onCleanup(longPress(el, (target, x, y) => {
      const entry = entryAt(target);
      if (entry) props.menuFor(entry.dataset.name!, x, y);
    }))} onContextMenu={onContextMenu}>
      <Show when={props.layout === 'wall'}>
        <Wall items={props.items} path={props.path} />
      </Show>
      <Show
        when={props.layout === 'list'}
        fallback={props.layout === 'grid' &&
          <Grid items={props.items} path={props.path} selected={sel.selected()} cursor={sel.keyed() ? sel.cursor() : -1} toggle={sel.clickSelect} />
        }
      >
        <List items={props.items} path={props.path} selection={sel} />
      </Show>
    </div>
  );
}

function List(props: { items: Obj[]; path: string; selection: Selection }) {
  const sel = props.selection;
  // grid semantics: the header row's column headers, then a row group of the (virtual) rows, each
  // with its row index among all the entries and its cells (`.cell` boxes lay out as contents)
  return (
    <div class="list" role="grid" aria-label={props.path} aria-rowcount={props.items.length + 1} aria-multiselectable="true">
      <div class="row head" role="row" aria-rowindex={1}>
        <span class="cell check" role="columnheader">
          <input
            type="checkbox"
            aria-label={t('select_all')}
            checked={sel.selected().size > 0 && sel.selected().size === props.items.length}
            onChange={(e) => sel.select(e.currentTarget.checked ? props.items.map((o) => o.name) : [])}
          />
        </span>
        <SortHeader key="name" label={t('col.name')} class="name" />
        <SortHeader key="size" label={t('col.size')} class="size" />
        <SortHeader key="modified" label={t('col.modified')} class="modified" />
      </div>
      <VirtualRows count={props.items.length} rowHeight={ROW} class="virtual" role="rowgroup">
        {(i) => {
          const o = () => props.items[i()]!;
          return (
            <div
              class="row"
              role="row"
              aria-rowindex={i() + 2}
              aria-selected={sel.selected().has(o().name)}
              classList={{ selected: sel.selected().has(o().name), cursor: sel.keyed() && sel.cursor() === i() }}
              data-testid="row"
              data-name={o().name}
            >
              <span class="cell check" role="gridcell">
                <input type="checkbox" aria-label={o().name} checked={sel.selected().has(o().name)} onClick={(e) => sel.clickSelect(e, o().name)} />
              </span>
              <span class="cell" role="gridcell">
                <a class="name" href={href(joinPath(props.path, o().name))} onClick={(e) => linkClick(e, joinPath(props.path, o().name))}>
                  <span class="ficon" aria-hidden="true">
                    <Icon name={iconOf(o())} />
                  </span>
                  <span class="fname">{o().name}</span>
                </a>
              </span>
              <span class="size" role="gridcell">{o().is_dir ? '' : formatSize(o().size)}</span>
              <span class="modified" role="gridcell">{formatDate(o().modified)}</span>
            </div>
          );
        }}
      </VirtualRows>
    </div>
  );
}

function SortHeader(props: { key: SortKey; label: string; class: string }) {
  const active = () => sort().key === props.key;
  return (
    <span class="cell" role="columnheader" aria-sort={active() ? (sort().asc ? 'ascending' : 'descending') : 'none'}>
      <button class={`link ${props.class}`} onClick={() => setSort({ key: props.key, asc: active() ? !sort().asc : true })}>
        {props.label} <span aria-hidden="true">{active() ? (sort().asc ? '↑' : '↓') : ''}</span>
      </button>
    </span>
  );
}

function Grid(props: { items: Obj[]; path: string; selected: Set<string>; cursor: number; toggle: (e: MouseEvent, n: string) => void }) {
  let el!: HTMLDivElement;
  const [cols, setCols] = createSignal(4);
  const measure = () => setCols(Math.max(1, Math.floor(el.clientWidth / CELL)));
  onMount(() => {
    measure();
    window.addEventListener('resize', measure);
  });
  onCleanup(() => window.removeEventListener('resize', measure));
  // a share's visitor has no raw links (`/d`): the listing's thumbnail (`/sd…?type=thumb`) or the icon
  const thumb = (o: Obj) => o.thumb || (o.type === TYPE.IMAGE && !isSharePath(props.path) ? rawLink(joinPath(props.path, o.name), o.sign) : '');
  return (
    <div class="grid" ref={el}>
      <VirtualRows count={Math.ceil(props.items.length / cols())} rowHeight={CELL + 40} class="virtual">
        {(r) => (
          <div class="grid-row" style={{ 'grid-template-columns': `repeat(${cols()}, 1fr)` }}>
            <For each={props.items.slice(r() * cols(), r() * cols() + cols())}>
              {(o) => (
                <div class="cell" classList={{ selected: props.selected.has(o.name), cursor: props.items[props.cursor] === o }} data-testid="cell" data-name={o.name}>
                  <input type="checkbox" aria-label={o.name} checked={props.selected.has(o.name)} onClick={(e) => props.toggle(e, o.name)} />
                  <a href={href(joinPath(props.path, o.name))} onClick={(e) => linkClick(e, joinPath(props.path, o.name))}>
                    <Show when={thumb(o)} fallback={<span class="big-icon"><Icon name={iconOf(o)} size={64} /></span>}>
                      <img src={thumb(o)} alt="" loading="lazy" />
                    </Show>
                    <span class="fname">{o.name}</span>
                  </a>
                </div>
              )}
            </For>
          </div>
        )}
      </VirtualRows>
    </div>
  );
}

/** A justified photo wall of the folder's images: each tile as wide as its picture at one height. */
function Wall(props: { items: Obj[]; path: string }) {
  const images = () => props.items.filter((o) => !o.is_dir && o.type === TYPE.IMAGE && (o.thumb || !isSharePath(props.path)));
  return (
    <div class="wall" data-testid="wall">
      <For each={images()}>
        {(o) => {
          const [ratio, setRatio] = createSignal(1.5);
          const p = joinPath(props.path, o.name);
          return (
            <a class="tile" href={href(p)} onClick={(e) => linkClick(e, p)} data-name={o.name} style={{ 'flex-grow': ratio(), width: `${ratio() * WALL_HEIGHT}px` }} title={o.name}>
              <img src={o.thumb || rawLink(p, o.sign)} alt={o.name} loading="lazy" onLoad={(e) => e.currentTarget.naturalHeight && setRatio(e.currentTarget.naturalWidth / e.currentTarget.naturalHeight)} />
            </a>
          );
        }}
      </For>
      <Show when={images().length < props.items.length}>
        <p class="muted wall-note">{t('wall.others', { n: props.items.length - images().length })}</p>
      </Show>
    </div>
  );
}
