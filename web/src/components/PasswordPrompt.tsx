import { onMount, Show } from 'solid-js';
import { t } from '../i18n';

/** A password asked before a page opens: a protected folder's (the default words) or a share's code. */
export default function PasswordPrompt(props: {
  wrong: boolean;
  onSubmit: (value: string) => void;
  title?: string;
  hint?: string;
  label?: string;
  name?: string;
  testid?: string;
}) {
  let input!: HTMLInputElement;
  onMount(() => input.focus());
  return (
    <form
      class="card narrow"
      data-testid={props.testid}
      onSubmit={(e) => {
        e.preventDefault();
        props.onSubmit(input.value);
      }}
    >
      <h2>{props.title ?? t('password.title')}</h2>
      <p class="muted">{props.hint ?? t('password.hint')}</p>
      <input ref={input} type="password" name={props.name ?? 'folder-password'} aria-label={props.label ?? t('login.password')} />
      <Show when={props.wrong}>
        <p class="error" role="alert">
          {t('password.wrong')}
        </p>
      </Show>
      <div class="actions">
        <button type="submit" class="primary">
          {t('password.submit')}
        </button>
      </div>
    </form>
  );
}
