// An archive opened like a folder: its inner tree (/api/fs/archive/meta), a preview or download
// of one entry through its raw link (/ae?inner=), and "extract here / to…" as tasks with progress.
import { createMemo, createResource, createSignal, For, onCleanup, Show } from 'solid-js';
import { api, ApiError, type ArchiveMeta, type ArchiveTreeEntry, baseName, parentOf, type Task } from '../api';
import { extOf, formatDate, formatSize } from '../format';
import { t } from '../i18n';
import { notify, passwordFor } from '../state';
import '../archive.css';
import Icon from './Icon';
import { pickFolder } from './FolderPicker';
import { isSharePath, visitorKeys } from '../shares/api';

/**
 * An entry of the tree as the wire sends it, with its children typed as entries again (the
 * server's shape types them loosely, as records, since zod shapes are not recursive there).
 */
type Entry = Omit<ArchiveTreeEntry, 'children'> & { children: Entry[] | null };
/** The wire's answer, with the tree typed as entries (see Entry). */
type Meta = Omit<ArchiveMeta, 'content'> & { content: Entry[] };
type TaskInfo = Pick<Task, 'id' | 'state' | 'progress' | 'error'>;

const IMAGE_EXTS = new Set(['png', 'jpg', 'jpeg', 'gif', 'webp', 'svg', 'bmp', 'avif']);
const TEXT_EXTS = new Set(['txt', 'md', 'json', 'log', 'csv', 'xml', 'yml', 'yaml', 'ini', 'conf', 'js', 'ts', 'css', 'html', 'py', 'go', 'rs', 'sh', 'c', 'h', 'java']);
const TEXT_LIMIT = 1024 * 1024;
const DONE = new Set([2, 4, 7]);

/** The archive suffixes the server reads (`/api/public/archive_extensions`), fetched once. */
let extensions: Promise<string[]> | undefined;
export function archiveExtensions(): Promise<string[]> {
  extensions ??= api<string[]>('/public/archive_extensions').catch(() => []);
  return extensions;
}
export const isArchiveName = (name: string, exts: string[]) => exts.some((e) => name.toLowerCase().endsWith(e) && name.length > e.length);

export default function ArchiveView(props: { path: string }) {
  /** A share visitor (`/@s/<id>/…`): the share code and folder password, and no extraction (it writes). */
  const visitor = () => isSharePath(props.path);
  const keys = () => (visitor() ? visitorKeys(props.path) : { password: passwordFor(props.path) });
  const [pass, setPass] = createSignal('');
  const [inner, setInner] = createSignal<string[]>([]);
  const [preview, setPreview] = createSignal<{ name: string; url: string; text?: string } | undefined>();
  const [meta, { refetch }] = createResource(pass, async (archivePass) => {
    try {
      return { ok: await api<Meta>('/fs/archive/meta', { path: props.path, ...keys(), archive_pass: archivePass }) };
    } catch (e) {
      if (e instanceof ApiError && e.code === 202) return { needPassword: true };
      return { error: e instanceof Error ? e.message : String(e) };
    }
  });
  const folder = createMemo(() => {
    let nodes = meta()?.ok?.content ?? [];
    for (const seg of inner()) nodes = nodes.find((n) => n.name === seg && n.is_dir)?.children ?? [];
    return [...nodes].sort((a, b) => (a.is_dir !== b.is_dir ? (a.is_dir ? -1 : 1) : a.name.localeCompare(b.name)));
  });
  const entryUrl = (name: string) => {
    const m = meta()?.ok;
    const innerPath = `/${[...inner(), name].join('/')}`;
    const q = new URLSearchParams({ inner: innerPath });
    if (pass()) q.set('pass', pass());
    if (m?.sign) q.set('sign', m.sign);
    const raw = m?.raw_url ?? '';
    return `${raw}${raw.includes('?') ? '&' : '?'}${q.toString()}`;
  };
  const open = async (e: Entry) => {
    if (e.is_dir) return setInner([...inner(), e.name]);
    const url = entryUrl(e.name);
    const ext = extOf(e.name);
    if (IMAGE_EXTS.has(ext)) return setPreview({ name: e.name, url });
    if (TEXT_EXTS.has(ext) && e.size <= TEXT_LIMIT) {
      const res = await fetch(url);
      const text = await res.text();
      return setPreview({ name: e.name, url, text });
    }
    window.open(url, '_blank');
  };

  const extraction = createExtraction(() => props.path, pass, inner);

  let passInput!: HTMLInputElement;
  return (
    <section class="archive-view" aria-label={t('archive.contents')} data-testid="archive-view">
      <Show when={meta()?.needPassword}>
        <form
          class="archive-password"
          onSubmit={(e) => {
            e.preventDefault();
            if (passInput.value === pass()) void refetch();
            setPass(passInput.value);
          }}
        >
          <p>{t('archive.password_needed')}</p>
          <input ref={passInput} type="password" aria-label={t('archive.password')} placeholder={t('archive.password')} />
          <button class="primary" type="submit">
            {t('archive.unlock')}
          </button>
        </form>
      </Show>
      <Show when={meta()?.error}>
        <p class="error">{meta()?.error}</p>
      </Show>
      <Show when={meta()?.ok}>
        <ArchiveBar encrypted={!!meta()?.ok?.encrypted} inner={inner()} extract={!visitor()} extractHere={() => void extraction.extract(parentOf(props.path), false)} extractTo={() => void extraction.extractTo()} />
        <Show when={extraction.progress()}>
          <p class="archive-progress" data-testid="archive-progress">
            {extraction.progress()}
          </p>
        </Show>
        <Show when={meta()?.ok?.encrypted && !pass()}>
          <form
            class="archive-password"
            onSubmit={(e) => {
              e.preventDefault();
              setPass(passInput.value);
            }}
          >
            <input ref={passInput} type="password" aria-label={t('archive.password')} placeholder={t('archive.password')} />
            <button type="submit">{t('archive.unlock')}</button>
          </form>
        </Show>
        <EntryList inner={inner()} folder={folder()} up={() => setInner(inner().slice(0, -1))} open={(e) => void open(e)} entryUrl={entryUrl} />
        <EntryPreview preview={preview()} close={() => setPreview(undefined)} />
      </Show>
    </section>
  );
}

/** "Extract here / to…": the decompress tasks, followed until their uploads are done. */
function createExtraction(path: () => string, pass: () => string, inner: () => string[]) {
  const [progress, setProgress] = createSignal<string | undefined>();
  let timer: ReturnType<typeof setInterval> | undefined;
  onCleanup(() => clearInterval(timer));
  const follow = (ids: string[], dst: string) => {
    clearInterval(timer);
    let phase: 'decompress' | 'decompress_upload' = 'decompress';
    setProgress(t('archive.extracting', { progress: 0 }));
    timer = setInterval(async () => {
      const tasks = await api<TaskInfo[] | null>(`/task/${phase}/undone`).catch(() => null);
      const mine = (tasks ?? []).filter((x) => phase === 'decompress_upload' || ids.includes(x.id));
      if (mine.length > 0) {
        const p = Math.round(mine.reduce((n, x) => n + x.progress, 0) / mine.length);
        setProgress(t(phase === 'decompress' ? 'archive.extracting' : 'archive.uploading', { progress: p }));
        return;
      }
      const done = (await api<TaskInfo[] | null>(`/task/${phase}/done`).catch(() => null)) ?? [];
      const failed = done.find((x) => (phase === 'decompress_upload' || ids.includes(x.id)) && x.state === 7);
      if (failed) {
        clearInterval(timer);
        setProgress(undefined);
        notify(t('archive.failed', { error: failed.error }), 'error');
        return;
      }
      if (phase === 'decompress' && done.filter((x) => ids.includes(x.id) && DONE.has(x.state)).length === ids.length) {
        phase = 'decompress_upload';
        return;
      }
      if (phase === 'decompress_upload') {
        clearInterval(timer);
        setProgress(undefined);
        notify(t('archive.extracted', { dir: dst }));
      }
    }, 700);
  };
  const extract = async (dst: string, newDir: boolean) => {
    try {
      const r = await api<{ task: TaskInfo[] }>('/fs/archive/decompress', {
        src_dir: parentOf(path()),
        name: [baseName(path())],
        dst_dir: dst,
        archive_pass: pass(),
        password: passwordFor(path()),
        inner_path: `/${inner().join('/')}`,
        put_into_new_dir: newDir,
        overwrite: false,
      });
      follow(r.task.map((x) => x.id), dst);
    } catch (e) {
      notify(e instanceof Error ? e.message : String(e), 'error');
    }
  };
  const extractTo = async () => {
    const dst = await pickFolder(t('archive.extract_pick'), parentOf(path()));
    if (dst) await extract(dst, true);
  };
  return { progress, extract, extractTo };
}

/** The archive's title, where one is inside it, and the extract buttons (not for share visitors). */
function ArchiveBar(props: { encrypted: boolean; inner: string[]; extract: boolean; extractHere: () => void; extractTo: () => void }) {
  return (
    <div class="archive-bar">
      <h2>
        {t('archive.contents')}
        <Show when={props.encrypted}>
          <span class="muted"> · {t('archive.encrypted')}</span>
        </Show>
      </h2>
      <span class="muted">/{props.inner.join('/')}</span>
      <span class="grow" />
      <Show when={props.extract}>
        <button onClick={() => props.extractHere()}>{t('archive.extract_here')}</button>
        <button onClick={() => props.extractTo()}>{t('archive.extract_to')}</button>
      </Show>
    </div>
  );
}

/** The entries of the archive's current folder, with a way up. */
function EntryList(props: { inner: string[]; folder: Entry[]; up: () => void; open: (e: Entry) => void; entryUrl: (name: string) => string }) {
  return (
    <ul class="archive-list">
      <Show when={props.inner.length > 0}>
        <li>
          <button class="link" onClick={() => props.up()}>
            <Icon name="folder" size={18} /> {t('archive.up')}
          </button>
        </li>
      </Show>
      <For each={props.folder} fallback={<li class="muted">{t('archive.empty')}</li>}>
        {(e) => (
          <li class="archive-entry">
            <button class="link" onClick={() => props.open(e)} data-testid="archive-entry">
              <Icon name={e.is_dir ? 'folder' : 'file'} size={18} /> {e.name}
            </button>
            <span class="muted">{e.is_dir ? '' : formatSize(e.size)}</span>
            <span class="muted">{formatDate(e.modified)}</span>
            <Show when={!e.is_dir}>
              <a class="button" href={props.entryUrl(e.name)} download={e.name}>
                {t('archive.download')}
              </a>
            </Show>
          </li>
        )}
      </For>
    </ul>
  );
}

/** An entry shown in the page: text or an image. */
function EntryPreview(props: { preview: { name: string; url: string; text?: string } | undefined; close: () => void }) {
  return (
    <Show when={props.preview}>
      {(p) => (
        <div class="archive-preview" data-testid="archive-preview">
          <div class="archive-bar">
            <strong>{p().name}</strong>
            <span class="grow" />
            <button onClick={() => props.close()}>{t('archive.close_preview')}</button>
          </div>
          <Show when={p().text !== undefined} fallback={<img src={p().url} alt={p().name} />}>
            <pre>{p().text}</pre>
          </Show>
        </div>
      )}
    </Show>
  );
}
