// Picks a destination folder in a tree (children loaded from /api/fs/dirs when a node opens),
// opened along the path one starts from, with "new folder here".
import Icon from './Icon';
import { createEffect, createResource, createSignal, For, type JSX, Show } from 'solid-js';
import { api, joinPath } from '../api';
import { t } from '../i18n';
import { notify, notifyError, passwordFor } from '../state';
import { showDialog } from './Dialog';

const listDirs = (p: string) => api<Array<{ name: string }> | null>('/fs/dirs', { path: p, password: passwordFor(p) }).then((d) => (d ?? []).map((x) => x.name));
const isAncestor = (p: string, of: string) => p === '/' || of === p || of.startsWith(`${p}/`);

function Node(props: { path: string; name: string; start: string; selected: string; select: (p: string) => void; reload: number }) {
  const [open, setOpen] = createSignal(isAncestor(props.path, props.start));
  // a folder chosen below this one (one just made) opens the way to it
  createEffect(() => isAncestor(props.path, props.selected) && props.path !== props.selected && setOpen(true));
  const [children] = createResource(
    () => (open() ? ([props.path, props.reload] as const) : undefined),
    ([p]) => listDirs(p).catch(() => [] as string[]),
  );
  return (
    <li role="treeitem" aria-expanded={open()} aria-selected={props.selected === props.path}>
      <div class="tree-row" classList={{ selected: props.selected === props.path }}>
        <button type="button" class="link twist" aria-label={props.name || '/'} tabindex="-1" onClick={() => setOpen(!open())}>
          {open() ? '▾' : '▸'}
        </button>
        <button
          type="button"
          class="link"
          data-path={props.path}
          onClick={() => props.select(props.path)}
          onDblClick={() => setOpen(!open())}
          onKeyDown={(e) => {
            // tree keys: → opens, ← closes, ↑/↓ move between the folders shown
            if (e.key === 'ArrowRight') setOpen(true);
            else if (e.key === 'ArrowLeft') setOpen(false);
            else if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
              const all = [...(e.currentTarget.closest('[role=tree]')?.querySelectorAll<HTMLButtonElement>('button[data-path]') ?? [])];
              all[all.indexOf(e.currentTarget) + (e.key === 'ArrowDown' ? 1 : -1)]?.focus();
            } else return;
            e.preventDefault();
          }}
        >
          <Icon name={props.path === '/' ? 'home' : 'folder'} /> {props.name || '/'}
        </button>
      </div>
      <Show when={open() && (children() ?? []).length}>
        <ul role="group">
          <For each={children()}>{(name) => <Node path={joinPath(props.path, name)} name={name} start={props.start} selected={props.selected} select={props.select} reload={props.reload} />}</For>
        </ul>
      </Show>
    </li>
  );
}

/** `extra`: more of the dialog under the tree (the move/copy dialogs' choice for names already there). */
export function pickFolder(title: string, start: string, extra?: () => JSX.Element): Promise<string | undefined> {
  return showDialog<string>(title, (done) => {
    const [dir, setDir] = createSignal(start);
    const [reload, setReload] = createSignal(0);
    const [naming, setNaming] = createSignal(false);
    const newFolder = async (name: string) => {
      try {
        await api('/fs/mkdir', { path: joinPath(dir(), name), password: passwordFor(dir()) });
        notify(t('done.mkdir', { name }));
        setNaming(false);
        setReload((n) => n + 1);
        setDir(joinPath(dir(), name));
      } catch (e) {
        notifyError(e);
      }
    };
    return (
      <div class="picker">
        <div class="picker-path" data-testid="picker-path">
          {dir()}
        </div>
        <ul class="picker-tree" role="tree" aria-label={t('pick.tree')}>
          <Node path="/" name="" start={start} selected={dir()} select={setDir} reload={reload()} />
        </ul>
        <Show when={naming()}>
          <form
            class="picker-new"
            onSubmit={(e) => {
              e.preventDefault();
              const name = String(new FormData(e.currentTarget).get('folder') ?? '').trim();
              if (name) void newFolder(name);
            }}
          >
            <input name="folder" aria-label={t('mkdir.prompt')} placeholder={t('mkdir.prompt')} ref={(el) => setTimeout(() => el.focus())} />
            <button type="submit">{t('ok')}</button>
          </form>
        </Show>
        {extra?.()}
        <div class="actions">
          <button type="button" onClick={() => setNaming(!naming())}>
            {t('pick.new_folder')}
          </button>
          <span class="grow" />
          <button type="button" onClick={() => done()}>
            {t('cancel')}
          </button>
          <button type="button" class="primary" onClick={() => done(dir())}>
            {t('pick.here')}
          </button>
        </div>
      </div>
    );
  });
}
