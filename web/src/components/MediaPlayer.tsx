// Video and audio through ArtPlayer (loaded with this chunk only when a media file is opened):
// subtitles found beside the file (.srt and .ass are converted to WebVTT by the player), speed,
// picture-in-picture, a playlist of the folder's files of the same kind with auto-next, a subtitle
// offset and a horizontal flip (PlayerTools.tsx), and "open in" links for external players.
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
import { createPlayerTools, PlayerToolbar } from './PlayerTools';

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
  const tools = createPlayerTools();
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
    art = new Artplayer(playerOptions({ box, url: props.url, obj: props.obj, dir: dir(), subs: subtitles(), lang, i18n, onSubtitle: (url, o) => void art?.subtitle.switch(url, o) }));
    art.on('video:ended', () => autoNext() && playOther(neighbour(1, false)));
    tools.attach(art);
  });
  onCleanup(() => {
    gone = true;
    art?.destroy(false);
  });

  return (
    <div class="media-player" classList={{ audio }}>
      <div ref={box} class="art-box" data-testid={audio ? 'preview-audio' : 'preview-video'} />
      <MediaBar playlist={playlist().length > 1} subtitles={subtitles()} autoNext={autoNext()} setAutoNext={setAutoNext} prev={() => playOther(neighbour(-1))} next={() => playOther(neighbour(1))} />
      <Show when={!audio}>
        <PlayerToolbar tools={tools} subtitles={subtitles().length > 0} />
        <ExternalPlayers url={props.url} name={props.obj.name} />
      </Show>
      <Show when={playlist().length > 1}>
        <Playlist dir={dir()} items={playlist()} current={props.obj.name} play={playOther} />
      </Show>
    </div>
  );
}

interface PlayerSetup {
  box: HTMLDivElement;
  url: string;
  obj: Obj;
  dir: string;
  subs: Obj[];
  lang: string;
  i18n: unknown;
  onSubtitle: (url: string, o: { name: string; type: string }) => void;
}

/** ArtPlayer's options: the site's autoplay and audio cover, the first subtitle on, a menu for the others. */
function playerOptions({ box, url, obj, dir, subs, lang, i18n, onSubtitle }: PlayerSetup): Option {
  const audio = obj.type === TYPE.AUDIO;
  const subUrl = (o: Obj) => rawLink(joinPath(dir, o.name), o.sign);
  const subType = (o: Obj) => (extOf(o.name) === 'ssa' ? 'ass' : extOf(o.name));
  return {
    container: box,
    url,
    type: extOf(obj.name),
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
                onSubtitle(o.url, { name: o.html, type: o.type });
              },
            },
          ]
        : [],
  };
}

/** Previous / next with auto-next (a playlist of more than one), and the subtitle files found. */
function MediaBar(props: { playlist: boolean; subtitles: Obj[]; autoNext: boolean; setAutoNext: (on: boolean) => void; prev: () => void; next: () => void }) {
  return (
    <div class="media-bar">
      <Show when={props.playlist}>
        <button onClick={() => props.prev()}>{t('media.prev')}</button>
        <button onClick={() => props.next()}>{t('media.next')}</button>
        <label class="check">
          <input
            type="checkbox"
            checked={props.autoNext}
            data-testid="auto-next"
            onChange={(e) => {
              props.setAutoNext(e.currentTarget.checked);
              localStorage.setItem(AUTO_NEXT_KEY, String(e.currentTarget.checked));
            }}
          />
          {t('media.auto_next')}
        </label>
      </Show>
      <Show when={props.subtitles.length}>
        <span class="muted" data-testid="subtitle-files">
          {t('media.subtitles')}: {props.subtitles.map((o) => o.name).join(', ')}
        </span>
      </Show>
    </div>
  );
}

/** "Open in" links for external video players. */
function ExternalPlayers(props: { url: string; name: string }) {
  return (
    <nav class="external-players" aria-label={t('media.open_in')}>
      <span class="muted">{t('media.open_in')}</span>
      <For each={externalPlayers(props.url, props.name)}>
        {(p) => (
          <a href={p.href} data-player={p.name}>
            {p.name}
          </a>
        )}
      </For>
    </nav>
  );
}

/** The folder's files of the same kind, the current one marked. */
function Playlist(props: { dir: string; items: Obj[]; current: string; play: (o: Obj) => void }) {
  return (
    <ol class="playlist" aria-label={t('media.playlist')} data-testid="playlist">
      <For each={props.items}>
        {(o) => (
          <li classList={{ current: o.name === props.current }}>
            <a
              href={href(joinPath(props.dir, o.name))}
              aria-current={o.name === props.current ? 'true' : undefined}
              onClick={(e) => {
                e.preventDefault();
                props.play(o);
              }}
            >
              {o.name}
            </a>
          </li>
        )}
      </For>
    </ol>
  );
}
