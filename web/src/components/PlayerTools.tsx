// The video player's own tools beside ArtPlayer's controls: the subtitle offset in 0.1 s steps
// (buttons, Z earlier and X later; kept per browser like auto-next) and a horizontal flip.
import type Artplayer from 'artplayer';
import { createSignal, onCleanup, onMount, Show } from 'solid-js';
import { t } from '../i18n';

const OFFSET_KEY = 'subtitle-offset';
const STEP = 0.1;
const LIMIT = 10;

/** An offset in seconds, within ±10 s (as ArtPlayer allows) and to one decimal. */
export const roundOffset = (s: number) => Math.round(Math.max(-LIMIT, Math.min(LIMIT, Number.isFinite(s) ? s : 0)) * 10) / 10;

/** "+0.3 s", "−0.2 s", "0 s". */
const shown = (s: number) => `${s > 0 ? '+' : s < 0 ? '−' : ''}${Math.abs(s).toFixed(s ? 1 : 0)} s`;

/**
 * The offset and flip state of one player. `art` is set once ArtPlayer is made; `attach` hooks its
 * subtitle loads, so each loaded track (the first one, or one chosen from the menu) gets the offset.
 */
export function createPlayerTools() {
  const [offset, setOffsetSignal] = createSignal(roundOffset(Number(localStorage.getItem(OFFSET_KEY))));
  const [flipped, setFlipped] = createSignal(false);
  let art: Artplayer | undefined;
  // ArtPlayer shifts every cue of the loaded track from its original times (startTime = original +
  // offset, within the video's duration: so not before the duration is known)
  const apply = () => {
    const a = art;
    if (!a) return;
    if (a.duration > 0) a.subtitleOffset = offset();
    else a.once('video:loadedmetadata', () => (a.subtitleOffset = offset()));
  };
  const setOffset = (s: number) => {
    setOffsetSignal(roundOffset(s));
    localStorage.setItem(OFFSET_KEY, String(offset()));
    apply();
  };
  const attach = (a: Artplayer) => {
    art = a;
    a.on('subtitleLoad', () => offset() !== 0 && apply());
  };
  const flip = () => {
    setFlipped(!flipped());
    if (art) art.video.style.transform = flipped() ? 'scaleX(-1)' : '';
  };
  return { offset, setOffset, flipped, flip, attach, shift: (steps: number) => setOffset(offset() + steps * STEP) };
}

export type PlayerTools = ReturnType<typeof createPlayerTools>;

/** Z and X move the subtitles 0.1 s earlier or later while the player is on the page. */
function useOffsetKeys(tools: PlayerTools, enabled: () => boolean) {
  const onKey = (e: KeyboardEvent) => {
    if (!enabled() || e.ctrlKey || e.metaKey || e.altKey || (e.target as HTMLElement).closest('input, textarea, select, .dialog, .context-menu')) return;
    const k = e.key.toLowerCase();
    if (k === 'z') tools.shift(-1);
    else if (k === 'x') tools.shift(1);
  };
  onMount(() => document.addEventListener('keydown', onKey));
  onCleanup(() => document.removeEventListener('keydown', onKey));
}

/** The offset buttons (when there are subtitles) and the flip toggle. */
export function PlayerToolbar(props: { tools: PlayerTools; subtitles: boolean }) {
  const tools = props.tools;
  useOffsetKeys(tools, () => props.subtitles);
  return (
    <div class="player-tools" role="toolbar" aria-label={t('player.tools')}>
      <Show when={props.subtitles}>
        <span class="muted" id="subtitle-offset-label">
          {t('player.subtitle_offset')}
        </span>
        <button class="small" aria-label={t('player.subtitle_earlier')} title={`${t('player.subtitle_earlier')} (Z)`} data-testid="subtitle-earlier" onClick={() => tools.shift(-1)}>
          −0.1 s
        </button>
        <output data-testid="subtitle-offset" aria-labelledby="subtitle-offset-label" aria-live="polite">
          {shown(tools.offset())}
        </output>
        <button class="small" aria-label={t('player.subtitle_later')} title={`${t('player.subtitle_later')} (X)`} data-testid="subtitle-later" onClick={() => tools.shift(1)}>
          +0.1 s
        </button>
        <Show when={tools.offset() !== 0}>
          <button class="small" data-testid="subtitle-offset-reset" onClick={() => tools.setOffset(0)}>
            {t('player.subtitle_reset')}
          </button>
        </Show>
      </Show>
      <button class="small" aria-pressed={tools.flipped()} data-testid="flip" onClick={tools.flip}>
        {t('player.flip')}
      </button>
    </div>
  );
}
