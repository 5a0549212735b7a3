// Preview of one file by its type: images (with a gallery over the folder's images), HTML5
// video and audio (the server answers range requests), text with highlighting, markdown, PDF.
import Icon from './Icon';
import { createMemo, createResource, createSignal, lazy, Match, onCleanup, onMount, Show, Suspense, Switch } from 'solid-js';
import { baseName, type GetResp, joinPath, type Obj, parentOf, rawLink } from '../api';
import { extOf, formatDate, formatSize } from '../format';
import { t } from '../i18n';
import { navigate } from '../router';
import { copyText } from './fileOps';
import { showQr } from './QrCode';
import { editPath, isTextFile, setEditPath, TEXT_LIMIT } from './textFiles';
import { can, settings } from '../state';
import { isSharePath } from '../shares/api';
import { iconOf, TYPE } from './icons';
import { officeServicesFor } from '../office';
import ImageViewer from './ImageViewer';
import Markdown from './Markdown';
import ArchiveView, { archiveExtensions, isArchiveName } from './ArchiveView';

const MediaPlayer = lazy(() => import('./MediaPlayer'));
const TextEditor = lazy(() => import('./TextEditor'));
const OfficeView = lazy(() => import('./OfficeView'));

export default function Preview(props: { path: string; obj: GetResp; siblings: Obj[] }) {
  const url = () => props.obj.raw_url || rawLink(props.path, props.obj.sign);
  /** A share visitor's file: its link is the `/sd` one; archives open only with `share_archive_preview`. */
  const visitor = () => isSharePath(props.path);
  const link = () => (visitor() ? props.obj.raw_url : rawLink(props.path, props.obj.sign));
  const ext = () => extOf(props.obj.name);
  const [version, setVersion] = createSignal(0);
  const [archiveExts] = createResource(archiveExtensions);
  const isArchive = () => isArchiveName(props.obj.name, archiveExts() ?? []) && (!visitor() || settings().share_archive_preview === 'true');
  const images = createMemo(() => props.siblings.filter((o) => !o.is_dir && o.type === TYPE.IMAGE));
  const galleryIndex = () => images().findIndex((o) => o.name === props.obj.name);
  const go = (delta: number) => {
    const list = images();
    if (list.length < 2) return;
    const next = list[(galleryIndex() + delta + list.length) % list.length]!;
    navigate(joinPath(parentOf(props.path), next.name), true);
  };
  const onKey = (e: KeyboardEvent) => {
    if ((e.target as HTMLElement).closest('input, textarea, .dialog')) return;
    if (props.obj.type === TYPE.IMAGE && e.key === 'ArrowRight') go(1);
    if (props.obj.type === TYPE.IMAGE && e.key === 'ArrowLeft') go(-1);
  };
  onMount(() => document.addEventListener('keydown', onKey));
  onCleanup(() => document.removeEventListener('keydown', onKey));

  return (
    <section class="preview" aria-label={props.obj.name}>
      <div class="preview-head">
        <h1 class="file-title">
          <Icon name={iconOf(props.obj)} size={22} /> <span data-testid="preview-name">{props.obj.name}</span>
        </h1>
        <span class="muted">
          {formatSize(props.obj.size)} · {formatDate(props.obj.modified)}
        </span>
        <span class="grow" />
        <a class="button primary" href={url()} download={baseName(props.path)}>
          {t('download')}
        </a>
        <button onClick={() => copyText(link())}>{t('copy_link')}</button>
        <button onClick={() => showQr(props.obj.name, link())}>{t('qr')}</button>
        <Show when={!visitor() && isTextFile(props.obj) && can(3) && editPath() !== props.path && props.obj.size <= TEXT_LIMIT}>
          <button onClick={() => setEditPath(props.path)}>{t('edit')}</button>
        </Show>
      </div>
      <div class="preview-body">
        <Switch fallback={<Unsupported url={url()} />}>
          <Match when={isArchive()}>
            <ArchiveView path={props.path} />
          </Match>
          <Match when={props.obj.type === TYPE.IMAGE}>
            <Show when={url()} keyed>
              {(src) => <ImageViewer src={src} name={props.obj.name} count={images().length} index={galleryIndex()} go={go} />}
            </Show>
          </Match>
          <Match when={props.obj.type === TYPE.VIDEO || props.obj.type === TYPE.AUDIO}>
            <Suspense fallback={<p class="muted">{t('loading')}</p>}>
              <Show when={props.obj} keyed>
                {(o) => <MediaPlayer path={props.path} obj={o} url={url()} siblings={props.siblings} />}
              </Show>
            </Suspense>
          </Match>
          <Match when={ext() === 'pdf'}>
            <PdfView url={url()} name={props.obj.name} />
          </Match>
          <Match when={officeServicesFor(props.obj.name).length > 0 && !(editPath() === props.path && isTextFile(props.obj))}>
            <Suspense fallback={<p class="muted">{t('loading')}</p>}>
              <OfficeView path={props.path} name={props.obj.name} services={officeServicesFor(props.obj.name)} />
            </Suspense>
          </Match>
          <Match when={editPath() === props.path && isTextFile(props.obj)}>
            <EditView path={props.path} url={url()} size={props.obj.size} onClose={(saved) => (setEditPath(undefined), saved && setVersion((v) => v + 1))} />
          </Match>
          <Match when={isTextFile(props.obj)}>
            <TextView url={url()} ext={ext()} size={props.obj.size} version={version()} />
          </Match>
        </Switch>
      </div>
    </section>
  );
}

function Unsupported(props: { url: string }) {
  return (
    <div class="unsupported">
      <p>{t('preview.unsupported')}</p>
      <a href={props.url} target="_blank" rel="noopener">
        {t('preview.open_raw')}
      </a>
    </div>
  );
}

/**
 * Atrium's own raw links answer `Content-Disposition: attachment` (as AList does), which makes a
 * browser download a frame's document instead of showing it: the bytes are fetched and framed
 * as a blob of type application/pdf. Links elsewhere (a driver's raw_url) are framed directly.
 */
function PdfView(props: { url: string; name: string }) {
  let blob: string | undefined;
  const release = () => blob && URL.revokeObjectURL(blob);
  const [src] = createResource(
    () => props.url,
    async (u) => {
      if (!u.startsWith(`${location.origin}/`)) return u;
      const res = await fetch(u);
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      release();
      blob = URL.createObjectURL(new Blob([await res.arrayBuffer()], { type: 'application/pdf' }));
      return blob;
    },
  );
  onCleanup(release);
  return (
    <Show when={src()} fallback={<p class="muted">{src.error ? String(src.error) : t('loading')}</p>}>
      <iframe class="pdf" src={src()} title={props.name} data-testid="preview-pdf" />
    </Show>
  );
}

/** The file's text in the editor (fetched whole: files over TEXT_LIMIT are not edited). */
function EditView(props: { path: string; url: string; size: number; onClose: (saved: boolean) => void }) {
  const [text] = createResource(
    () => props.url,
    async (u) => {
      if (props.size > TEXT_LIMIT) throw new Error(t('editor.too_large'));
      const res = await fetch(u, { cache: 'no-store' });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      return res.text();
    },
  );
  return (
    <Show when={text() !== undefined} fallback={<p class="muted">{text.error ? String(text.error.message ?? text.error) : t('loading')}</p>}>
      <Suspense fallback={<p class="muted">{t('loading')}</p>}>
        <TextEditor path={props.path} text={text()!} onClose={props.onClose} />
      </Suspense>
    </Show>
  );
}

function TextView(props: { url: string; ext: string; size: number; version: number }) {
  const [text] = createResource(
    () => [props.url, props.version] as const,
    async ([u]) => {
      const res = await fetch(u, { cache: 'no-store', headers: props.size > TEXT_LIMIT ? { Range: `bytes=0-${TEXT_LIMIT - 1}` } : {} });
      if (!res.ok && res.status !== 206) throw new Error(`HTTP ${res.status}`);
      return res.text();
    },
  );
  const [html] = createResource(
    () => (props.ext !== 'md' ? text() : undefined),
    async (code) => (await import('../highlight')).highlight(code, props.ext),
  );
  return (
    <Show when={text() !== undefined} fallback={<p class="muted">{text.error ? String(text.error) : t('loading')}</p>}>
      <Show
        when={props.ext === 'md'}
        fallback={
          <pre class="code" data-testid="preview-text">
            <Show when={html()} fallback={<code>{text()}</code>}>
              <code class="hljs" innerHTML={html()} />
            </Show>
          </pre>
        }
      >
        <Markdown source={text()!} class="md-preview" />
      </Show>
    </Show>
  );
}
