// A folder (list or grid, sorted, paginated per the pagination_type setting, with its header
// and readme) or a file (preview), for the virtual path in the URL.
import PasswordPrompt from '../components/PasswordPrompt';
import Icon from '../components/Icon';
import { batch, createEffect, createMemo, createResource, createSignal, For, Match, on, onCleanup, onMount, Show, Switch } from 'solid-js';
import { api, ApiError, type GetResp, joinPath, type ListResp, type Obj, parentOf, rawLink } from '../api';
import Breadcrumbs from '../components/Breadcrumbs';
import { longPress, openMenu } from '../components/ContextMenu';
import { fileActions } from '../components/fileActions';
import { mkdir, newTextFile, offlineDownload, remove, rename } from '../components/fileOps';
import { iconOf, TYPE } from '../components/icons';
import Markdown from '../components/Markdown';
import Preview from '../components/Preview';
import { UploadOptions } from '../components/UploadPanel';
import VirtualRows from '../components/VirtualRows';
import { compareNames, formatDate, formatSize } from '../format';
import { t } from '../i18n';
import { href, linkClick, navigate } from '../router';
import { can, passwordFor, rememberPassword, setCurrentFolder, settings } from '../state';
import { enqueue, filesFromDrop, filesFromInput, onUploaded } from '../uploads';
import { hideFilesMatcher } from '../hideFiles';

const ROW = 44;
const CELL = 150;
const PASSWORD_ERROR = 403;

type SortKey = 'name' | 'size' | 'modified';
type View = 'list' | 'grid' | 'wall';
const [view, setView] = createSignal<View>((localStorage.getItem('view') as View) ?? 'list');
const WALL_HEIGHT = 180;
const [sort, setSort] = createSignal<{ key: SortKey; asc: boolean }>({ key: 'name', asc: true });

interface Loaded {
  kind: 'folder' | 'file';
  obj?: GetResp;
  items: Obj[];
  total: number;
  readme: string;
  header: string;
  write: boolean;
}

export default function Browser(props: { path: string }) {
  const [needPassword, setNeedPassword] = createSignal(false);
  const [wrongPassword, setWrongPassword] = createSignal(false);
  const [page, setPage] = createSignal(1);
  const [version, setVersion] = createSignal(0);
  const mode = () => settings().pagination_type || 'all';
  const perPage = () => (mode() === 'all' ? 0 : Number(settings().default_page_size) || 30);

  const load = async ([path, pg]: [string, number, number]): Promise<Loaded | undefined> => {
    const password = passwordFor(path);
    setCurrentFolder(path);
    try {
      const obj = await api<GetResp>('/fs/get', { path, password });
      if (!obj.is_dir) {
        setCurrentFolder(parentOf(path));
        const siblings = obj.type === TYPE.IMAGE || obj.type === TYPE.VIDEO || obj.type === TYPE.AUDIO ? await api<ListResp>('/fs/list', { path: parentOf(path), password: passwordFor(parentOf(path)) }).catch(() => undefined) : undefined;
        return { kind: 'file', obj, items: siblings?.content ?? [], total: 0, readme: obj.readme, header: obj.header, write: false };
      }
      const list = await api<ListResp>('/fs/list', { path, password, page: pg, per_page: perPage() });
      setNeedPassword(false);
      return { kind: 'folder', items: list.content ?? [], total: list.total, readme: list.readme, header: list.header, write: list.write };
    } catch (e) {
      if (e instanceof ApiError && e.code === PASSWORD_ERROR && /password/i.test(e.message)) {
        setNeedPassword(true);
        setWrongPassword(password !== '');
        return undefined;
      }
      throw e;
    }
  };
  // the tab shows where one is: "Photos | Site", the site alone at the root
  createEffect(() => {
    const site = settings().site_title || 'Atrium';
    const name = props.path.slice(props.path.lastIndexOf('/') + 1);
    document.title = name ? `${name} | ${site}` : site;
  });
  const [data] = createResource(() => [props.path, page(), version()] as [string, number, number], load);

  // load_more / auto_load_more keep the pages seen so far
  const [pages, setPages] = createSignal<Obj[]>([]);
  createEffect(
    on(data, (d) => {
      if (!d || d.kind !== 'folder') return;
      setPages((prev) => (mode().includes('load_more') && page() > 1 ? [...prev, ...d.items] : d.items));
    }),
  );
  createEffect(on(() => props.path, () => batch(() => (setPage(1), setSelected(new Set<string>()), setCursor(0))), { defer: true }));
  const refresh = () => {
    setSelected(new Set<string>());
    if (page() !== 1) setPage(1);
    else setVersion((v) => v + 1);
  };
  onCleanup(onUploaded((dir) => dir === props.path && refresh()));

  const hidden = createMemo(() => hideFilesMatcher(settings().hide_files));
  const items = createMemo(() => {
    const { key, asc } = sort();
    const isHidden = hidden();
    const list = pages().filter((o) => !isHidden(joinPath(props.path, o.name)));
    const dir = asc ? 1 : -1;
    list.sort((a, b) => {
      if (a.is_dir !== b.is_dir) return a.is_dir ? -1 : 1;
      const c = key === 'name' ? compareNames(a.name, b.name) : key === 'size' ? a.size - b.size : Date.parse(a.modified) - Date.parse(b.modified);
      return c * dir || compareNames(a.name, b.name);
    });
    return list;
  });

  // the photo wall is for folders with pictures: elsewhere a stored "wall" shows the list
  const hasImages = createMemo(() => items().some((o) => o.type === TYPE.IMAGE));
  const shownView = () => (view() === 'wall' && !hasImages() ? 'list' : view());

  // a README.md in the folder is rendered below the listing when no path rule gives a readme
  const readmeFile = createMemo(() => (settings().readme_autorender === 'false' ? undefined : pages().find((o) => !o.is_dir && o.name.toLowerCase() === 'readme.md')));
  const [readmeText] = createResource(
    () => (data()?.readme ? undefined : readmeFile()),
    async (o) => {
      const res = await fetch(rawLink(joinPath(props.path, o.name), o.sign));
      return res.ok ? res.text() : '';
    },
  );

  const [selected, setSelected] = createSignal(new Set<string>());
  const [cursor, setCursor] = createSignal(0);
  // the keyboard cursor shows once a key moved it, not on page load (where it looks like a selection)
  const [keyed, setKeyed] = createSignal(false);
  /** Shift-click selects the range from the entry clicked before to this one. */
  let anchor = -1;
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
  const toggle = (name: string) =>
    setSelected((s) => {
      const n = new Set(s);
      if (n.has(name)) n.delete(name);
      else n.add(name);
      return n;
    });
  const selectedNames = () => [...selected()];
  const selectedObjs = () => items().filter((o) => selected().has(o.name));
  /** What a context menu on `name` acts on: the selection when it holds the entry, else the entry alone (the selection is left as it is). */
  const targetsOf = (name: string): Obj[] => {
    if (selected().has(name)) return selectedObjs();
    const o = items().find((x) => x.name === name);
    return o ? [o] : [];
  };
  const menuFor = (name: string, x: number, y: number) => {
    const targets = targetsOf(name);
    // the row the menu belongs to carries the cursor mark
    const i = items().findIndex((o) => o.name === name);
    if (i >= 0) batch(() => (setCursor(i), setKeyed(true)));
    openMenu(x, y, targets.length === 1 ? t('actions.for', { name }) : t('selected', { n: targets.length }), fileActions({ dir: props.path, targets, after }));
  };
  const entryAt = (el: EventTarget | null) => (el as HTMLElement | null)?.closest<HTMLElement>('[data-name]') ?? undefined;
  const onContextMenu = (e: MouseEvent) => {
    const entry = entryAt(e.target);
    if (!entry) return;
    e.preventDefault();
    menuFor(entry.dataset.name!, e.clientX, e.clientY);
  };
  const open = (o: Obj) => navigate(joinPath(props.path, o.name));
  const after = (ok: boolean) => ok && refresh();
  const canWrite = () => !!data()?.write;

  const onKey = (e: KeyboardEvent) => {
    if (data()?.kind !== 'folder' || (e.target as HTMLElement).closest('input:not([type=checkbox]), textarea, select, .dialog, .backdrop, .context-menu')) return;
    const list = items();
    const cur = list[cursor()];
    const step = view() === 'grid' ? Math.max(1, Math.floor(document.querySelector('.grid')?.clientWidth ?? CELL) / CELL | 0) : 1;
    const moveTo = (i: number) => {
      setKeyed(true);
      const n = Math.max(0, Math.min(list.length - 1, i));
      setCursor(n);
      const el = document.querySelector('.virtual');
      if (el) {
        const top = el.getBoundingClientRect().top + window.scrollY + Math.floor(n / step) * (view() === 'grid' ? CELL + 40 : ROW);
        if (top < window.scrollY + 80 || top > window.scrollY + window.innerHeight - ROW) window.scrollTo({ top: top - window.innerHeight / 2 });
      }
      e.preventDefault();
    };
    if (e.key === 'ArrowDown') moveTo(cursor() + step);
    else if (e.key === 'ArrowUp') moveTo(cursor() - step);
    else if (e.key === 'ArrowRight' && view() === 'grid') moveTo(cursor() + 1);
    else if (e.key === 'ArrowLeft' && view() === 'grid') moveTo(cursor() - 1);
    else if (((e.key === 'F10' && e.shiftKey) || e.key === 'ContextMenu') && cur) {
      e.preventDefault();
      setKeyed(true);
      const el = document.querySelector(`[data-name="${CSS.escape(cur.name)}"]`)?.getBoundingClientRect();
      menuFor(cur.name, el ? el.left + 40 : 40, el ? el.bottom : 80);
    } else if (e.key === 'Enter' && cur) open(cur);
    else if (e.key === 'Escape' && selected().size) setSelected(new Set<string>());
    else if (e.key === ' ' && cur && !(e.target instanceof HTMLInputElement)) {
      toggle(cur.name);
      e.preventDefault();
    } else if (e.key === 'Backspace' && props.path !== '/') navigate(parentOf(props.path));
    else if (e.key === 'Delete' && can(7)) {
      const names = selected().size ? selectedNames() : cur ? [cur.name] : [];
      if (names.length) void remove(props.path, names).then(after);
    } else if (e.key === 'F2' && cur && can(4)) void rename(props.path, cur).then(after);
    else if (e.key === 'a' && (e.ctrlKey || e.metaKey)) {
      setSelected(new Set(list.map((o) => o.name)));
      e.preventDefault();
    }
  };
  onMount(() => document.addEventListener('keydown', onKey));
  onCleanup(() => document.removeEventListener('keydown', onKey));

  // drag and drop anywhere on the folder page
  const [dragging, setDragging] = createSignal(false);
  const onDrop = async (e: DragEvent) => {
    e.preventDefault();
    setDragging(false);
    if (!canWrite() || !e.dataTransfer) return;
    enqueue(await filesFromDrop(e.dataTransfer), props.path);
  };

  let fileInput!: HTMLInputElement;
  let folderInput!: HTMLInputElement;
  const chosen = (input: HTMLInputElement) => {
    if (input.files?.length) enqueue(filesFromInput(input.files), props.path);
    input.value = '';
  };

  return (
    <div
      class="browser"
      classList={{ dragging: dragging() }}
      onDragOver={(e) => {
        if (canWrite() && e.dataTransfer?.types.includes('Files')) {
          e.preventDefault();
          setDragging(true);
        }
      }}
      onDragLeave={(e) => e.currentTarget === e.target && setDragging(false)}
      onDrop={onDrop}
    >
      <div class="toolbar">
        <Breadcrumbs path={props.path} />
        <span class="grow" />
        <Show when={data()?.kind === 'folder'}>
          <label class="sort">
            <span class="sr-only">{t('sort')}</span>
            <select
              aria-label={t('sort')}
              value={`${sort().key}:${sort().asc ? 'asc' : 'desc'}`}
              onChange={(e) => {
                const [key, dir] = e.currentTarget.value.split(':');
                setSort({ key: key as SortKey, asc: dir === 'asc' });
              }}
            >
              <option value="name:asc">{t('col.name')} ↑</option>
              <option value="name:desc">{t('col.name')} ↓</option>
              <option value="size:asc">{t('col.size')} ↑</option>
              <option value="size:desc">{t('col.size')} ↓</option>
              <option value="modified:asc">{t('col.modified')} ↑</option>
              <option value="modified:desc">{t('col.modified')} ↓</option>
            </select>
          </label>
          <button
            class="icon"
            aria-label={view() === 'list' ? t('view.grid') : t('view.list')}
            title={view() === 'list' ? t('view.grid') : t('view.list')}
            onClick={() => {
              setView(view() === 'list' ? 'grid' : 'list');
              localStorage.setItem('view', view());
            }}
          >
            <Icon name={view() === 'list' ? 'grid' : 'list'} />
          </button>
          <Show when={hasImages()}>
            <button
              class="icon"
              aria-label={t('view.wall')}
              title={t('view.wall')}
              aria-pressed={view() === 'wall'}
              data-testid="wall-toggle"
              onClick={() => {
                setView(view() === 'wall' ? 'list' : 'wall');
                localStorage.setItem('view', view());
              }}
            >
              <Icon name="image" />
            </button>
          </Show>
          <button class="icon" aria-label={t('refresh')} title={t('refresh')} onClick={refresh}>
            <Icon name="refresh" />
          </button>
        </Show>
      </div>

      <Show when={needPassword()}>
        <PasswordPrompt
          wrong={wrongPassword()}
          onSubmit={(pw) => {
            rememberPassword(props.path, pw);
            refresh();
          }}
        />
      </Show>
      <Show when={data.error}>
        <p class="error" role="alert">
          {String(data.error?.message ?? data.error)}
        </p>
      </Show>
      <Show when={data.loading && !data()}>
        <p class="muted">{t('loading')}</p>
      </Show>

      <Show when={data()}>
        {(d) => (
          <Switch>
            <Match when={d().kind === 'file'}>
              <Preview path={props.path} obj={d().obj!} siblings={d().items} />
            </Match>
            <Match when={d().kind === 'folder'}>
              <Show when={d().header}>
                <Markdown source={d().header} class="folder-header" />
              </Show>
              <div class="actionbar">
                <Show when={canWrite()}>
                  <button onClick={() => fileInput.click()}><Icon name="upload" /> {t('upload.files')}</button>
                  <button onClick={() => folderInput.click()}><Icon name="upload" /> {t('upload.folder')}</button>
                  <button onClick={() => mkdir(props.path).then(after)}><Icon name="plus" /> {t('mkdir')}</button>
                  <button onClick={() => newTextFile(props.path, items().map((o) => o.name)).then(after)}><Icon name="text" /> {t('newfile')}</button>
                  <Show when={can(2)}>
                    <button onClick={() => offlineDownload(props.path).then(after)}><Icon name="upload" /> {t('offline')}</button>
                  </Show>
                  <UploadOptions />
                </Show>
                <input ref={fileInput} type="file" multiple hidden data-testid="upload-input" onChange={(e) => chosen(e.currentTarget)} />
                <input ref={folderInput} type="file" multiple hidden {...{ webkitdirectory: true }} onChange={(e) => chosen(e.currentTarget)} />
                <span class="grow" />
                <Show when={selected().size > 0}>
                  {/* floats at the bottom: a selection never moves the list */}
                  <div class="selection-bar" role="toolbar" aria-label={t('actions')}>
                  <span class="muted" data-testid="selected-count">
                    {t('selected', { n: selected().size })}
                  </span>
                  <For each={fileActions({ dir: props.path, targets: selectedObjs(), after }).filter((a) => a.id !== 'open')}>
                    {(a) => (
                      <button classList={{ danger: !!a.danger }} data-action={a.id} onClick={() => void a.run()}>
                        {a.label}
                      </button>
                    )}
                  </For>
                  <button class="icon" aria-label={t('close')} title={`${t('close')} (Esc)`} onClick={() => setSelected(new Set<string>())}>
                    <Icon name="close" />
                  </button>
                  </div>
                </Show>
              </div>
              <Show when={items().length > 0} fallback={<p class="empty muted">{t('empty')}</p>}>
                <div class="entries" ref={(el) => onCleanup(longPress(el, (target, x, y) => {
                  const entry = entryAt(target);
                  if (entry) menuFor(entry.dataset.name!, x, y);
                }))} onContextMenu={onContextMenu}>
                <Show when={shownView() === 'wall'}>
                  <Wall items={items()} path={props.path} />
                </Show>
                <Show
                  when={shownView() === 'list'}
                  fallback={shownView() === 'grid' &&
                    <Grid items={items()} path={props.path} selected={selected()} cursor={keyed() ? cursor() : -1} toggle={clickSelect} />
                  }
                >
                  <div class="list" role="grid" aria-label={props.path}>
                    <div class="row head" role="row">
                      <input
                        type="checkbox"
                        aria-label={t('select_all')}
                        checked={selected().size > 0 && selected().size === items().length}
                        onChange={(e) => setSelected(new Set(e.currentTarget.checked ? items().map((o) => o.name) : []))}
                      />
                      <SortHeader key="name" label={t('col.name')} class="name" />
                      <SortHeader key="size" label={t('col.size')} class="size" />
                      <SortHeader key="modified" label={t('col.modified')} class="modified" />
                    </div>
                    <VirtualRows count={items().length} rowHeight={ROW} class="virtual">
                      {(i) => {
                        const o = () => items()[i()]!;
                        return (
                          <div
                            class="row"
                            role="row"
                            classList={{ selected: selected().has(o().name), cursor: keyed() && cursor() === i() }}
                            data-testid="row"
                            data-name={o().name}
                          >
                            <input type="checkbox" aria-label={o().name} checked={selected().has(o().name)} onClick={(e) => clickSelect(e, o().name)} />
                            <a class="name" href={href(joinPath(props.path, o().name))} onClick={(e) => linkClick(e, joinPath(props.path, o().name))}>
                              <span class="ficon" aria-hidden="true">
                                <Icon name={iconOf(o())} />
                              </span>
                              <span class="fname">{o().name}</span>
                            </a>
                            <span class="size">{o().is_dir ? '' : formatSize(o().size)}</span>
                            <span class="modified">{formatDate(o().modified)}</span>
                          </div>
                        );
                      }}
                    </VirtualRows>
                  </div>
                </Show>
                </div>
              </Show>
              <Pager mode={mode()} page={page()} setPage={setPage} total={d().total} perPage={perPage()} loaded={pages().length} loading={data.loading} />
              <Show when={d().readme || readmeText()}>
                <Markdown source={d().readme || readmeText()!} class="readme" />
              </Show>
            </Match>
          </Switch>
        )}
      </Show>
      <Show when={dragging()}>
        <div class="dropzone">{t('upload.drop')}</div>
      </Show>
    </div>
  );
}

function SortHeader(props: { key: SortKey; label: string; class: string }) {
  const active = () => sort().key === props.key;
  return (
    <button class={`link ${props.class}`} onClick={() => setSort({ key: props.key, asc: active() ? !sort().asc : true })}>
      {props.label} {active() ? (sort().asc ? '↑' : '↓') : ''}
    </button>
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
  const thumb = (o: Obj) => o.thumb || (o.type === TYPE.IMAGE ? rawLink(joinPath(props.path, o.name), o.sign) : '');
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
  const images = () => props.items.filter((o) => !o.is_dir && o.type === TYPE.IMAGE);
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

function Pager(props: { mode: string; page: number; setPage: (n: number) => void; total: number; perPage: number; loaded: number; loading: boolean }) {
  const pages = () => (props.perPage ? Math.ceil(props.total / props.perPage) : 1);
  let sentinel: HTMLDivElement | undefined;
  onMount(() => {
    if (props.mode !== 'auto_load_more' || !sentinel) return;
    const io = new IntersectionObserver((entries) => {
      if (entries[0]?.isIntersecting && !props.loading && props.loaded < props.total) props.setPage(props.page + 1);
    });
    io.observe(sentinel);
    onCleanup(() => io.disconnect());
  });
  return (
    <Switch>
      <Match when={props.mode === 'pagination' && pages() > 1}>
        <nav class="pager" aria-label="pages">
          <button disabled={props.page <= 1} onClick={() => props.setPage(props.page - 1)}>
            {t('page.prev')}
          </button>
          <span>
            {props.page} / {pages()}
          </span>
          <button disabled={props.page >= pages()} onClick={() => props.setPage(props.page + 1)}>
            {t('page.next')}
          </button>
        </nav>
      </Match>
      <Match when={props.mode === 'load_more' && props.loaded < props.total}>
        <div class="pager">
          <button disabled={props.loading} onClick={() => props.setPage(props.page + 1)}>
            {t('load_more')}
          </button>
        </div>
      </Match>
      <Match when={props.mode === 'auto_load_more'}>
        <div ref={sentinel} class="sentinel" />
      </Match>
    </Switch>
  );
}

