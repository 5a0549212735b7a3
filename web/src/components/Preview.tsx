// Preview of one file by its type: images (with a gallery over the folder's images), HTML5
// video and audio (the server answers range requests), text with highlighting, markdown, PDF.
import Icon from './Icon';
import { createMemo, createResource, Match, onCleanup, onMount, Show, Switch } from 'solid-js';
import { baseName, type GetResp, joinPath, type Obj, parentOf, rawLink } from '../api';
import { extOf, formatDate, formatSize } from '../format';
import { t } from '../i18n';
import { navigate } from '../router';
import { settings } from '../state';
import { copyText } from './fileOps';
import { iconOf, TYPE } from './icons';
import Markdown from './Markdown';

const TEXT_LIMIT = 2 * 1024 * 1024;
/** Code and plain-text extensions previewed as text even when the text_types setting omits them. */
const CODE_EXTS = new Set('ts,mts,cts,jsx,mjs,cjs,css,scss,less,toml,csv,tsv,log,rb,kt,swift,lua,pl,r,dart,svelte,cs,fs,scala,ex,exs,erl,hs,ml,zig,nim,sql,diff,patch,env,cfg,nix,tf,graphql,proto,mk,cmake,gradle'.split(','));

export default function Preview(props: { path: string; obj: GetResp; siblings: Obj[] }) {
  const url = () => props.obj.raw_url || rawLink(props.path, props.obj.sign);
  const ext = () => extOf(props.obj.name);
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
        <button onClick={() => copyText(rawLink(props.path, props.obj.sign))}>{t('copy_link')}</button>
      </div>
      <div class="preview-body">
        <Switch fallback={<Unsupported url={url()} />}>
          <Match when={props.obj.type === TYPE.IMAGE}>
            <div class="gallery">
              <Show when={images().length > 1}>
                <button class="nav prev" aria-label={t('gallery.prev')} onClick={() => go(-1)}>
                  ‹
                </button>
              </Show>
              <img src={url()} alt={props.obj.name} data-testid="preview-image" />
              <Show when={images().length > 1}>
                <button class="nav next" aria-label={t('gallery.next')} onClick={() => go(1)}>
                  ›
                </button>
              </Show>
            </div>
            <Show when={images().length > 1}>
              <p class="muted center">
                {galleryIndex() + 1} / {images().length}
              </p>
            </Show>
          </Match>
          <Match when={props.obj.type === TYPE.VIDEO}>
            <video class="media" controls autoplay={settings().video_autoplay === 'true'} src={url()} data-testid="preview-video" />
          </Match>
          <Match when={props.obj.type === TYPE.AUDIO}>
            <audio class="media" controls autoplay={settings().audio_autoplay === 'true'} src={url()} data-testid="preview-audio" />
          </Match>
          <Match when={ext() === 'pdf'}>
            <PdfView url={url()} name={props.obj.name} />
          </Match>
          <Match when={props.obj.type === TYPE.TEXT || ext() === 'md' || CODE_EXTS.has(ext())}>
            <TextView url={url()} ext={ext()} size={props.obj.size} />
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

function TextView(props: { url: string; ext: string; size: number }) {
  const [text] = createResource(
    () => props.url,
    async (u) => {
      const res = await fetch(u, { headers: props.size > TEXT_LIMIT ? { Range: `bytes=0-${TEXT_LIMIT - 1}` } : {} });
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
