// The visitor's page of a share link, `/@s/<id>/<inside>`: the share code prompt, the password
// prompt of a protected folder inside the share, the shared folder's entries with the share's
// header and readme (sanitised markdown), and a shared file's preview (when `share_preview` is
// on; archives when `share_archive_preview` is on too) or download: the page starts on the
// download view with `share_preview_download_by_default`, on the archive's contents for an
// archive with `share_preview_archives_by_default`.
import { createMemo, createResource, createSignal, Match, Show, Switch } from 'solid-js';
import { archiveExtensions, isArchiveName } from '../components/ArchiveView';
import { api, ApiError, type GetResp, joinPath, type ListResp, type Obj, parentOf } from '../api';
import Icon from '../components/Icon';
import { iconOf, TYPE } from '../components/icons';
import { openMenu } from '../components/ContextMenu';
import Entries from '../pages/browser/Entries';
import { layout, sortEntries } from '../pages/browser/layout';
import { createSelection } from '../pages/browser/selection';
import Toolbar from '../pages/browser/Toolbar';
import Markdown from '../components/Markdown';
import PasswordPrompt from '../components/PasswordPrompt';
import Preview from '../components/Preview';
import { formatSize } from '../format';
import { t } from '../i18n';
import { navigate } from '../router';
import { rememberPassword, settings } from '../state';
import { splitVisitorPath, visitorApiPath, visitorKeys, rememberShareCode, MSG_WRONG_SHARE_CODE } from './api';

const REFUSED = 403;

type Loaded =
  | { kind: 'folder'; list: ListResp }
  | { kind: 'file'; obj: GetResp; siblings: ListResp['content'] }
  | { kind: 'code'; wrong: boolean }
  | { kind: 'folder-password'; wrong: boolean };

/** What the visitor's path shows: a folder, a file with its siblings, or the prompt it needs. */
async function loadVisit([p]: [string, number]): Promise<Loaded> {
  const { id, inside } = splitVisitorPath(p);
  const path = visitorApiPath(id, inside);
  const keys = visitorKeys(p);
  try {
    const obj = await api<GetResp>('/fs/get', { path, ...keys });
    if (!obj.is_dir) {
      const parent = parentOf(inside);
      const siblings = inside === '/' ? [] : ((await api<ListResp>('/fs/list', { path: visitorApiPath(id, parent), ...visitorKeys(parentOf(p)) }).catch(() => undefined))?.content ?? []);
      return { kind: 'file', obj, siblings };
    }
    return { kind: 'folder', list: await api<ListResp>('/fs/list', { path, ...keys }) };
  } catch (e) {
    if (e instanceof ApiError && e.code === REFUSED) {
      if (e.message === MSG_WRONG_SHARE_CODE) return { kind: 'code', wrong: keys.password !== '' };
      return { kind: 'folder-password', wrong: keys.folder_password !== '' };
    }
    throw e;
  }
}

export default function ShareVisit(props: { path: string }) {
  const where = () => splitVisitorPath(props.path);
  /** Bumped when the visitor gives a code or a folder password: the page loads again. */
  const [given, setGiven] = createSignal(0);

  const [data] = createResource(() => [props.path, given()] as [string, number], loadVisit);

  /** A prompt's answer: remembered, then the page loads again with it. */
  const submit = (remember: (value: string) => void) => (value: string) => {
    remember(value);
    setGiven((n) => n + 1);
  };
  const submitCode = (value: string) => rememberShareCode(where().id, value);
  const submitFolderPassword = (value: string) => rememberPassword(props.path, value);

  return (
    <main class="container share-visit">
      <h2 class="muted">
        {settings().share_icon ? `${settings().share_icon} ` : ''}
        {t('share.shared_by')}
      </h2>
      <Show when={!data.error} fallback={<p class="error" role="alert">{t('share.unavailable')}: {String((data.error as Error)?.message ?? '')}</p>}>
        <Show when={data()} fallback={<p class="muted center">{t('loading')}</p>}>
          {(d) => (
            <Switch>
              <Match when={d().kind === 'code' && (d() as { wrong: boolean })}>
                {(c) => <PasswordPrompt title={t('share.code_title')} hint={t('share.code_hint')} label={t('share.password')} name="code" wrong={c().wrong} onSubmit={submit(submitCode)} />}
              </Match>
              <Match when={d().kind === 'folder-password' && (d() as { wrong: boolean })}>
                {(c) => (
                  <PasswordPrompt name="folder_password" wrong={c().wrong} onSubmit={submit(submitFolderPassword)} testid="share-folder-password" />
                )}
              </Match>
              <Match when={d().kind === 'file' && (d() as Extract<Loaded, { kind: 'file' }>)}>
                {(f) => (
                  <>
                    <Toolbar path={props.path} folder={false} hasImages={false} refresh={() => undefined} root={shareRoot(props.path)} />
                    <Show when={f().obj.header}>
                      <Markdown source={f().obj.header} />
                    </Show>
                    <SharedFile path={props.path} obj={f().obj} siblings={f().siblings ?? []} />
                    <Show when={f().obj.readme}>
                      <Markdown source={f().obj.readme} class="readme" />
                    </Show>
                  </>
                )}
              </Match>
              <Match when={d().kind === 'folder' && (d() as Extract<Loaded, { kind: 'folder' }>)}>
                {(f) => <SharedFolder path={props.path} list={f().list} />}
              </Match>
            </Switch>
          )}
        </Show>
      </Show>
    </main>
  );
}

/** A shared file: its download, or its preview where `share_preview` allows, starting as the settings say. */
function SharedFile(props: { path: string; obj: GetResp; siblings: Obj[] }) {
  const on = (key: string) => settings()[key] === 'true';
  const [exts] = createResource(archiveExtensions);
  const archive = () => isArchiveName(props.obj.name, exts() ?? []) && on('share_archive_preview');
  const [chosen, setChosen] = createSignal<boolean | undefined>();
  const previewing = () => on('share_preview') && (chosen() ?? (!on('share_preview_download_by_default') || (archive() && on('share_preview_archives_by_default'))));
  return (
    <Show
      when={previewing()}
      fallback={
        <p>
          <Icon name={iconOf(props.obj)} /> {props.obj.name} ({formatSize(props.obj.size)}){' '}
          <a class="button primary" href={props.obj.raw_url} download={props.obj.name} data-testid="share-download">
            {t('download')}
          </a>{' '}
          <Show when={on('share_preview')}>
            <button onClick={() => setChosen(true)} data-testid="share-preview">
              {t('share.preview')}
            </button>
          </Show>
        </p>
      }
    >
      <Preview path={props.path} obj={props.obj} siblings={props.siblings} />
    </Show>
  );
}

/** Where a visitor's crumbs start: the share itself. */
const shareRoot = (p: string) => ({ path: `/@s/${splitVisitorPath(p).id}`, label: t('share.shared_by') });

/**
 * A shared folder as the file browser shows one (issue #44 item 2): the share's header, the
 * breadcrumb from the share's top, sort and layout (list, grid with the listing's thumbnails,
 * photo wall), the entries (a right click or Shift+F10 opens them), and the readme.
 */
function SharedFolder(props: { path: string; list: ListResp }) {
  // a new array each time (sortEntries sorts in place): the memo then tells the order changed
  const items = createMemo(() => sortEntries([...(props.list.content ?? [])]));
  const sel = createSelection(items);
  const hasImages = () => items().some((o) => o.type === TYPE.IMAGE && !!o.thumb);
  const shown = () => (layout() === 'wall' && !hasImages() ? 'list' : layout());
  const open = (name: string) => navigate(joinPath(props.path, name));
  const menuFor = (name: string, x: number, y: number) => openMenu(x, y, t('actions.for', { name }), [{ id: 'open', label: t('open'), run: () => open(name) }]);
  // a README.md in the folder is rendered below the entries when the share gives no readme, as in the file browser (its bytes through the share's /sd link)
  const readmeFile = () => (props.list.readme || settings().readme_autorender === 'false' ? undefined : items().find((o) => !o.is_dir && o.name.toLowerCase() === 'readme.md'));
  const [readmeText] = createResource(readmeFile, async (o) => {
    const inner = joinPath(props.path, o.name);
    const { id, inside } = splitVisitorPath(inner);
    const got = await api<GetResp>('/fs/get', { path: visitorApiPath(id, inside), ...visitorKeys(inner) });
    const res = await fetch(got.raw_url);
    return res.ok ? res.text() : '';
  });
  return (
    <>
      <Toolbar path={props.path} folder hasImages={hasImages()} refresh={() => navigate(props.path, true)} root={shareRoot(props.path)} />
      <Show when={props.list.header}>
        <Markdown source={props.list.header} />
      </Show>
      <div data-testid="share-list">
        <Show when={items().length > 0} fallback={<p class="empty muted">{t('empty')}</p>}>
          <Entries path={props.path} items={items()} layout={shown()} selection={sel} menuFor={menuFor} />
        </Show>
      </div>
      <Show when={props.list.readme || readmeText()}>
        <Markdown source={props.list.readme || readmeText()!} class="readme" />
      </Show>
    </>
  );
}
