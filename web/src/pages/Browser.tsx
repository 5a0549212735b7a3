// A folder (list or grid, sorted, paginated per the pagination_type setting, with its header
// and readme) or a file (preview), for the virtual path in the URL. The pieces, by concern, are
// in pages/browser/: what is loaded (folder.ts), the layout and order (layout.ts), the selection
// and cursor (selection.ts), the keys (keys.ts), and the bars, entries and pager components.
import { batch, createEffect, createMemo, createSignal, Match, on, onCleanup, Show, Switch } from 'solid-js';
import { joinPath, type Obj } from '../api';
import { openMenu } from '../components/ContextMenu';
import { fileActions } from '../components/fileActions';
import { TYPE } from '../components/icons';
import Markdown from '../components/Markdown';
import PasswordPrompt from '../components/PasswordPrompt';
import Preview from '../components/Preview';
import UsageBar from '../components/UsageBar';
import { hideFilesMatcher } from '../hideFiles';
import { t } from '../i18n';
import { navigate } from '../router';
import { rememberPassword, settings } from '../state';
import { enqueue, filesFromDrop, onUploaded } from '../uploads';
import ActionBar from './browser/ActionBar';
import Entries from './browser/Entries';
import { createFolder, type Folder, type Loaded } from './browser/folder';
import { useBrowserKeys } from './browser/keys';
import { layout, sortEntries } from './browser/layout';
import Pager from './browser/Pager';
import { createSelection, type Selection } from './browser/selection';
import Toolbar from './browser/Toolbar';

export default function Browser(props: { path: string }) {
  const folder = createFolder(() => props.path);
  const { data } = folder;
  const hidden = createMemo(() => hideFilesMatcher(settings().hide_files));
  const items = createMemo(() => {
    const isHidden = hidden();
    return sortEntries(folder.pages().filter((o) => !isHidden(joinPath(props.path, o.name))));
  });
  const sel = createSelection(items);
  createEffect(on(() => props.path, () => batch(() => (folder.setPage(1), sel.reset())), { defer: true }));
  const refresh = () => {
    sel.clear();
    folder.reload();
  };
  onCleanup(onUploaded((dir) => dir === props.path && refresh()));

  // the photo wall is for folders with pictures: elsewhere a stored "wall" shows the list
  const hasImages = createMemo(() => items().some((o) => o.type === TYPE.IMAGE));
  const shownLayout = () => (layout() === 'wall' && !hasImages() ? 'list' : layout());

  const after = (ok: boolean) => ok && refresh();
  const menuFor = (name: string, x: number, y: number) => {
    const targets = sel.targetsOf(name);
    // the row the menu belongs to carries the cursor mark
    const i = items().findIndex((o) => o.name === name);
    if (i >= 0) sel.moveTo(i);
    openMenu(x, y, targets.length === 1 ? t('actions.for', { name }) : t('selected', { n: targets.length }), fileActions({ dir: props.path, targets, after }));
  };
  const open = (o: Obj) => navigate(joinPath(props.path, o.name));
  useBrowserKeys({ path: () => props.path, isFolder: () => data()?.kind === 'folder', items, selection: sel, menuFor, open, after });

  // drag and drop anywhere on the folder page
  const [dragging, setDragging] = createSignal(false);
  const onDrop = async (e: DragEvent) => {
    e.preventDefault();
    setDragging(false);
    if (!folder.canWrite() || !e.dataTransfer) return;
    enqueue(await filesFromDrop(e.dataTransfer), props.path);
  };

  return (
    <div
      class="browser"
      classList={{ dragging: dragging() }}
      onDragOver={(e) => {
        if (folder.canWrite() && e.dataTransfer?.types.includes('Files')) {
          e.preventDefault();
          setDragging(true);
        }
      }}
      onDragLeave={(e) => e.currentTarget === e.target && setDragging(false)}
      onDrop={onDrop}
    >
      <Toolbar path={props.path} folder={data()?.kind === 'folder'} hasImages={hasImages()} refresh={refresh} />
      <Show when={folder.needPassword()}>
        <PasswordPrompt
          wrong={folder.wrongPassword()}
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
              <FolderPage path={props.path} loaded={d()} folder={folder} items={items()} layout={shownLayout()} selection={sel} menuFor={menuFor} after={after} />
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

/** A folder: its header, the action bar, the entries, the pager and the readme. */
function FolderPage(props: {
  path: string;
  loaded: Loaded;
  folder: Folder;
  items: Obj[];
  layout: ReturnType<typeof layout>;
  selection: Selection;
  menuFor: (name: string, x: number, y: number) => void;
  after: (ok: boolean) => void;
}) {
  const folder = props.folder;
  return (
    <>
      <Show when={props.loaded.header}>
        <Markdown source={props.loaded.header} class="folder-header" />
      </Show>
      <ActionBar path={props.path} canWrite={folder.canWrite()} names={() => props.items.map((o) => o.name)} selection={props.selection} after={props.after} />
      <Show when={props.items.length > 0} fallback={<p class="empty muted">{t('empty')}</p>}>
        <Entries path={props.path} items={props.items} layout={props.layout} selection={props.selection} menuFor={props.menuFor} />
      </Show>
      <Pager mode={folder.mode()} page={folder.page()} setPage={folder.setPage} total={props.loaded.total} perPage={folder.perPage()} loaded={folder.pages().length} loading={folder.data.loading} />
      {/* the storage used of the user's quota, read again with each listing (after an upload, a delete) */}
      <UsageBar compact version={props.loaded} />
      <Show when={props.loaded.readme || folder.readmeText()}>
        <Markdown source={props.loaded.readme || folder.readmeText()!} class="readme" />
      </Show>
    </>
  );
}
