// What the browser shows for a path: the object (file or folder) with the folder's page of
// entries, the password prompt's state, the pages kept by load_more / auto_load_more, and the
// README.md rendered below a folder.
import { createEffect, createMemo, createResource, createSignal, on } from 'solid-js';
import { api, ApiError, type GetResp, joinPath, type ListResp, type Obj, parentOf, rawLink } from '../../api';
import { TYPE } from '../../components/icons';
import { passwordFor, setCurrentFolder, settings } from '../../state';
import { setPageTitle } from '../../title';

const PASSWORD_ERROR = 403;

export interface Loaded {
  kind: 'folder' | 'file';
  obj?: GetResp;
  items: Obj[];
  total: number;
  readme: string;
  header: string;
  write: boolean;
}

export function createFolder(path: () => string) {
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
  // the tab shows where one is: "Photos | Site", the site alone at the root (title.ts)
  createEffect(() => setPageTitle(path().slice(path().lastIndexOf('/') + 1)));
  const [data] = createResource(() => [path(), page(), version()] as [string, number, number], load);

  // load_more / auto_load_more keep the pages seen so far
  const [pages, setPages] = createSignal<Obj[]>([]);
  createEffect(
    on(data, (d) => {
      if (!d || d.kind !== 'folder') return;
      setPages((prev) => (mode().includes('load_more') && page() > 1 ? [...prev, ...d.items] : d.items));
    }),
  );
  /** Loads the folder again from its first page. */
  const reload = () => {
    if (page() !== 1) setPage(1);
    else setVersion((v) => v + 1);
  };

  // a README.md in the folder is rendered below the listing when no path rule gives a readme
  const readmeFile = createMemo(() => (settings().readme_autorender === 'false' ? undefined : pages().find((o) => !o.is_dir && o.name.toLowerCase() === 'readme.md')));
  const [readmeText] = createResource(
    () => (data()?.readme ? undefined : readmeFile()),
    async (o) => {
      const res = await fetch(rawLink(joinPath(path(), o.name), o.sign));
      return res.ok ? res.text() : '';
    },
  );

  return { data, pages, page, setPage, mode, perPage, reload, needPassword, wrongPassword, readmeText, canWrite: () => !!data()?.write };
}

export type Folder = ReturnType<typeof createFolder>;
