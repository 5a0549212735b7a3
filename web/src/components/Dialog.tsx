// Modal dialogs: one at a time, opened from anywhere with showDialog(); Escape or the backdrop
// closes with undefined.
import Icon from './Icon';
import { createSignal, type JSX, onCleanup, onMount, Show } from 'solid-js';
import { t } from '../i18n';

type Render = (close: (v?: unknown) => void) => JSX.Element;
const [current, setCurrent] = createSignal<{ title: string; render: Render; resolve: (v: unknown) => void } | undefined>();

export function showDialog<T>(title: string, render: (close: (v?: T) => void) => JSX.Element): Promise<T | undefined> {
  return new Promise((resolve) => {
    setCurrent({ title, render: render as Render, resolve: resolve as (v: unknown) => void });
  });
}

function close(v?: unknown) {
  const c = current();
  setCurrent(undefined);
  c?.resolve(v);
}

export function DialogHost() {
  const onKey = (e: KeyboardEvent) => {
    if (e.key === 'Escape' && current()) close();
  };
  onMount(() => document.addEventListener('keydown', onKey));
  onCleanup(() => document.removeEventListener('keydown', onKey));
  return (
    <Show when={current()}>
      {(c) => (
        <div class="backdrop" onClick={(e) => e.target === e.currentTarget && close()}>
          <div class="dialog" role="dialog" aria-modal="true" aria-label={c().title}>
            <div class="dialog-head">
              <h2>{c().title}</h2>
              <button class="icon" aria-label={t('close')} onClick={() => close()}>
                <Icon name="close" />
              </button>
            </div>
            {c().render(close)}
          </div>
        </div>
      )}
    </Show>
  );
}

/** Asks for one line of text. */
export function promptText(title: string, label: string, initial = ''): Promise<string | undefined> {
  return showDialog<string>(title, (done) => {
    let input!: HTMLInputElement;
    onMount(() => {
      input.focus();
      const dot = initial.lastIndexOf('.');
      input.setSelectionRange(0, dot > 0 ? dot : initial.length);
    });
    return (
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (input.value.trim()) done(input.value.trim());
        }}
      >
        <label>
          {label}
          <input ref={input} value={initial} name="value" autocomplete="off" />
        </label>
        <div class="actions">
          <button type="button" onClick={() => done()}>
            {t('cancel')}
          </button>
          <button type="submit" class="primary">
            {t('ok')}
          </button>
        </div>
      </form>
    );
  });
}

export function confirmAction(title: string, text: string, danger = true): Promise<boolean> {
  return showDialog<boolean>(title, (done) => (
    <div>
      <p>{text}</p>
      <div class="actions">
        <button type="button" onClick={() => done(false)}>
          {t('cancel')}
        </button>
        <button type="button" class={danger ? 'danger' : 'primary'} ref={(el) => setTimeout(() => el.focus())} onClick={() => done(true)}>
          {t('ok')}
        </button>
      </div>
    </div>
  )).then((v) => v === true);
}
