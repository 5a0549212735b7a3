// One image of a folder's gallery: zoom (buttons, wheel, pinch, double click, + and -), pan by
// dragging a zoomed image, rotate (R), fullscreen (F), and a swipe to the previous or next
// image when it is not zoomed.
import { createSignal, onCleanup, onMount, Show } from 'solid-js';
import { t } from '../i18n';
import Icon from './Icon';

const MIN = 1;
const MAX = 8;
const STEP = 1.25;
const SWIPE = 60;

export default function ImageViewer(props: { src: string; name: string; count: number; index: number; go: (delta: number) => void }) {
  const tf = createTransform();
  let stage!: HTMLDivElement;
  const fullscreen = () => (document.fullscreenElement ? document.exitFullscreen() : stage.requestFullscreen()).catch(() => undefined);
  const gesture = pointerGestures(() => stage, tf, (delta) => props.go(delta));

  const wheel = (e: WheelEvent) => {
    e.preventDefault();
    tf.zoomTo(tf.scale() * (e.deltaY < 0 ? STEP : 1 / STEP));
  };
  const onKey = (e: KeyboardEvent) => {
    if ((e.target as HTMLElement).closest('input, textarea, select, .dialog, .context-menu') || e.ctrlKey || e.metaKey || e.altKey) return;
    const keys: Record<string, () => void> = {
      '+': () => tf.zoomTo(tf.scale() * STEP),
      '=': () => tf.zoomTo(tf.scale() * STEP),
      '-': () => tf.zoomTo(tf.scale() / STEP),
      '0': tf.reset,
      r: tf.rotate,
      f: () => void fullscreen(),
    };
    keys[e.key]?.();
  };
  onMount(() => {
    document.addEventListener('keydown', onKey);
    stage.addEventListener('wheel', wheel, { passive: false });
  });
  onCleanup(() => document.removeEventListener('keydown', onKey));

  return (
    <div class="image-viewer">
      <ViewerTools tf={tf} fullscreen={() => void fullscreen()} />
      <div
        ref={stage}
        class="gallery"
        classList={{ zoomed: tf.scale() > 1 }}
        onPointerDown={gesture.down}
        onPointerMove={gesture.move}
        onPointerUp={gesture.up}
        onPointerCancel={gesture.cancel}
        onDblClick={() => (tf.scale() > 1 ? tf.reset() : tf.zoomTo(2))}
      >
        <Show when={props.count > 1}>
          <button class="nav prev" aria-label={t('gallery.prev')} onClick={() => props.go(-1)}>
            ‹
          </button>
        </Show>
        <img
          src={props.src}
          alt={props.name}
          data-testid="preview-image"
          draggable={false}
          style={{ transform: `translate(${tf.offset().x}px, ${tf.offset().y}px) rotate(${tf.rotation()}deg) scale(${tf.scale()})` }}
        />
        <Show when={props.count > 1}>
          <button class="nav next" aria-label={t('gallery.next')} onClick={() => props.go(1)}>
            ›
          </button>
        </Show>
      </div>
      <Show when={props.count > 1}>
        <p class="muted center">
          {props.index + 1} / {props.count}
        </p>
      </Show>
    </div>
  );
}

/** The image's zoom (1 to 8, back to the centre at 1), rotation and pan offset. */
function createTransform() {
  const [scale, setScale] = createSignal(1);
  const [rotation, setRotation] = createSignal(0);
  const [offset, setOffset] = createSignal({ x: 0, y: 0 });
  const zoomTo = (s: number) => {
    const next = Math.min(MAX, Math.max(MIN, s));
    setScale(next);
    if (next === 1) setOffset({ x: 0, y: 0 });
  };
  const reset = () => {
    setScale(1);
    setRotation(0);
    setOffset({ x: 0, y: 0 });
  };
  const rotate = () => setRotation((r) => (r + 90) % 360);
  return { scale, rotation, offset, setOffset, zoomTo, reset, rotate };
}

type Transform = ReturnType<typeof createTransform>;

/** Pointers down on the stage: one drags (pan when zoomed, else a swipe to `go`), two pinch. */
function pointerGestures(stage: () => HTMLDivElement, tf: Transform, go: (delta: number) => void) {
  const pointers = new Map<number, { x: number; y: number }>();
  let start = { x: 0, y: 0, offset: { x: 0, y: 0 }, distance: 0, scale: 1 };
  const distance = () => {
    const [a, b] = [...pointers.values()];
    return a && b ? Math.hypot(a.x - b.x, a.y - b.y) : 0;
  };
  const down = (e: PointerEvent) => {
    if ((e.target as HTMLElement).closest('button')) return;
    stage().setPointerCapture?.(e.pointerId);
    pointers.set(e.pointerId, { x: e.clientX, y: e.clientY });
    start = { x: e.clientX, y: e.clientY, offset: tf.offset(), distance: distance(), scale: tf.scale() };
  };
  const move = (e: PointerEvent) => {
    if (!pointers.has(e.pointerId)) return;
    pointers.set(e.pointerId, { x: e.clientX, y: e.clientY });
    if (pointers.size === 2 && start.distance) tf.zoomTo((start.scale * distance()) / start.distance);
    else if (pointers.size === 1 && tf.scale() > 1) tf.setOffset({ x: start.offset.x + e.clientX - start.x, y: start.offset.y + e.clientY - start.y });
  };
  const up = (e: PointerEvent) => {
    if (!pointers.has(e.pointerId)) return;
    const wasSingle = pointers.size === 1;
    pointers.delete(e.pointerId);
    const dx = e.clientX - start.x;
    const dy = e.clientY - start.y;
    if (wasSingle && tf.scale() === 1 && Math.abs(dx) > SWIPE && Math.abs(dx) > Math.abs(dy) * 1.5) go(dx < 0 ? 1 : -1);
  };
  const cancel = (e: PointerEvent) => pointers.delete(e.pointerId);
  return { down, move, up, cancel };
}

function ViewerTools(props: { tf: Transform; fullscreen: () => void }) {
  const tf = props.tf;
  return (
    <div class="viewer-tools" role="toolbar" aria-label={t('image.tools')}>
      <button class="icon" aria-label={t('image.zoom_out')} title={`${t('image.zoom_out')} (-)`} onClick={() => tf.zoomTo(tf.scale() / STEP)}>
        −
      </button>
      <span class="muted" data-testid="zoom">
        {Math.round(tf.scale() * 100)}%
      </span>
      <button class="icon" aria-label={t('image.zoom_in')} title={`${t('image.zoom_in')} (+)`} onClick={() => tf.zoomTo(tf.scale() * STEP)}>
        +
      </button>
      <button class="icon" aria-label={t('image.rotate')} title={`${t('image.rotate')} (R)`} onClick={tf.rotate}>
        <Icon name="rotate" />
      </button>
      <button class="icon" aria-label={`${t('image.reset')} 1:1`} title={`${t('image.reset')} (0)`} onClick={tf.reset}>
        1:1
      </button>
      <button class="icon" aria-label={t('image.fullscreen')} title={`${t('image.fullscreen')} (F)`} onClick={() => props.fullscreen()}>
        <Icon name="fullscreen" />
      </button>
    </div>
  );
}
