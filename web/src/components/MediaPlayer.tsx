// Video and audio through ArtPlayer (loaded with this chunk only when a media file is opened):
// subtitles found beside the file (.srt and .ass are converted to WebVTT by the player), speed,
// picture-in-picture, a playlist of the folder's files of the same kind with auto-next, and
// "open in" links for external players.
import Artplayer, { type Option } from 'artplayer';
import { createSignal, For, onCleanup, onMount, Show } from 'solid-js';
import { joinPath, type Obj, parentOf, rawLink } from '../api';
import { extOf } from '../format';
import { language, t } from '../i18n';
import { href, navigate } from '../router';
import { settings } from '../state';
import { TYPE } from './icons';
import { externalPlayers } from './externalPlayers';
import { playerLanguage } from './playerLanguage';

const SUBTITLE_EXTS = ['vtt', 'srt', 'ass', 'ssa'];
const AUTO_NEXT_KEY = 'auto-next';

/** Subtitle files beside a media file: same name, optionally a language part (clip.en.srt). */
export function subtitlesOf(name: string, siblings: Obj[]): Obj[] {
  const stem = name.slice(0, name.length - extOf(name).length - 1);
  return siblings.filter((o) => !o.is_dir && SUBTITLE_EXTS.includes(extOf(o.name)) && (o.name.startsWith(`${stem}.`) || o.name === stem));
}

export default function MediaPlayer(props: { path: string; obj: Obj; url: string; siblings: Obj[] }) {
  const dir = () => parentOf(props.path);
  const audio = props.obj.type === TYPE.AUDIO;
  const playlist = () => props.siblings.filter((o) => !o.is_dir && o.type === props.obj.type);
  const subtitles = () => subtitlesOf(props.obj.name, props.siblings);
  const [autoNext, setAutoNext] = createSignal(localStorage.getItem(AUTO_NEXT_KEY) !== 'false');
  /** The file `delta` places away in the playlist; `wrap` goes round from the last to the first. */
  const neighbour = (delta: number, wrap = true) => {
    const list = playlist();
    const i = list.findIndex((o) => o.name === props.obj.name);
    if (i < 0 || list.length < 2 || (!wrap && (i + delta < 0 || i + delta >= list.length))) return undefined;
    return list[(i + delta + list.length) % list.length];
  };
  const playOther = (o: Obj | undefined) => o && navigate(joinPath(dir(), o.name), true);

  let box!: HTMLDivElement;
  let art: Artplayer | undefined;
  let gone = false;
  onMount(async () => {
    const { lang, i18n } = await playerLanguage(language());
    if (gone) return;
    const subs = subtitles();
    const subUrl = (o: Obj) => rawLink(joinPath(dir(), o.name), o.sign);
    const subType = (o: Obj) => (extOf(o.name) === 'ssa' ? 'ass' : extOf(o.name));
    art = new Artplayer({
      container: box,
      url: props.url,
      type: extOf(props.obj.name),
      // audio shows the site's audio cover (the audio_cover setting) behind its controls
      poster: audio ? (settings().audio_cover ?? '').split('\n')[0] ?? '' : '',
      autoplay: settings()[audio ? 'audio_autoplay' : 'video_autoplay'] === 'true',
      volume: 1,
      setting: true,
      playbackRate: true,
      aspectRatio: !audio,
      pip: !audio,
      fullscreen: !audio,
      fullscreenWeb: !audio,
      screenshot: false,
      hotkey: true,
      miniProgressBar: true,
      autoSize: false,
      lang,
      i18n: (i18n ?? {}) as Option['i18n'],
      subtitle: subs[0] ? { url: subUrl(subs[0]), type: subType(subs[0]), name: subs[0].name, encoding: 'utf-8' } : {},
      settings:
        subs.length > 1
          ? [
              {
                html: t('media.subtitles'),
                tooltip: subs[0]!.name,
                selector: subs.map((o, i) => ({ html: o.name, default: i === 0, url: subUrl(o), type: subType(o) })),
                onSelect: (item) => {
                  const o = item as unknown as { html: string; url: string; type: string };
                  void art?.subtitle.switch(o.url, { name: o.html, type: o.type });
                },
              },
            ]
          : [],
    });
    art.on('video:ended', () => autoNext() && playOther(neighbour(1, false)));
  });
  onCleanup(() => {
    gone = true;
    art?.destroy(false);
  });

  return (
    <div class="media-player" classList={{ audio }}>
      <div ref={box} class="art-box" data-testid={audio ? 'preview-audio' : 'preview-video'} />
      <div class="media-bar">
        <Show when={playlist().length > 1}>
          <button onClick={() => playOther(neighbour(-1))}>{t('media.prev')}</button>
          <button onClick={() => playOther(neighbour(1))}>{t('media.next')}</button>
          <label class="check">
            <input
              type="checkbox"
              checked={autoNext()}
              data-testid="auto-next"
              onChange={(e) => {
                setAutoNext(e.currentTarget.checked);
                localStorage.setItem(AUTO_NEXT_KEY, String(e.currentTarget.checked));
              }}
            />
            {t('media.auto_next')}
          </label>
        </Show>
        <Show when={subtitles().length}>
          <span class="muted" data-testid="subtitle-files">
            {t('media.subtitles')}: {subtitles().map((o) => o.name).join(', ')}
          </span>
        </Show>
      </div>
      <Show when={!audio}>
        <nav class="external-players" aria-label={t('media.open_in')}>
          <span class="muted">{t('media.open_in')}</span>
          <For each={externalPlayers(props.url, props.obj.name)}>
            {(p) => (
              <a href={p.href} data-player={p.name}>
                {p.name}
              </a>
            )}
          </For>
        </nav>
      </Show>
      <Show when={playlist().length > 1}>
        <ol class="playlist" aria-label={t('media.playlist')} data-testid="playlist">
          <For each={playlist()}>
            {(o) => (
              <li classList={{ current: o.name === props.obj.name }}>
                <a
                  href={href(joinPath(dir(), o.name))}
                  aria-current={o.name === props.obj.name ? 'true' : undefined}
                  onClick={(e) => {
                    e.preventDefault();
                    playOther(o);
                  }}
                >
                  {o.name}
                </a>
              </li>
            )}
          </For>
        </ol>
      </Show>
    </div>
  );
}
