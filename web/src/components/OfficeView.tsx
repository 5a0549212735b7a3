// A document in an online office (WOPI): the page asks /api/wopi/create-session for the editor's
// address and a token, then POSTs access_token and access_token_ttl as a form into an iframe at
// that address (with WOPISrc in it), as WOPI hosts do: the token never sits in a URL. Edit mode
// when the server finds the user may write the file now, else read-only; a share's visitor
// always reads.
import { createResource, createSignal, For, onMount, Show } from 'solid-js';
import { api, type WopiSession } from '../api';
import { language, t } from '../i18n';
import { isSharePath, splitVisitorPath, visitorApiPath, visitorKeys } from '../shares/api';
import { passwordFor } from '../state';

function sessionFor(path: string, service: string): Promise<WopiSession> {
  const lang = language();
  if (isSharePath(path)) {
    const { id, inside } = splitVisitorPath(path);
    return api<WopiSession>('/wopi/create-session', { path: visitorApiPath(id, inside), edit: false, service, lang, ...visitorKeys(path) });
  }
  return api<WopiSession>('/wopi/create-session', { path, edit: true, service, lang, password: passwordFor(path) });
}

let frames = 0;

/** The editor's frame, and the form that opens it with the token. */
function OfficeFrame(props: { session: WopiSession; title: string }) {
  const name = `office-frame-${++frames}`;
  let form!: HTMLFormElement;
  // the frame must be in the document before the form targets it
  onMount(() => setTimeout(() => form.submit()));
  return (
    <>
      <iframe name={name} class="office-frame" title={props.title} data-testid="office-frame" allow="fullscreen; clipboard-read; clipboard-write" allowfullscreen />
      <form ref={form} method="post" action={props.session.editor_url} target={name} hidden>
        <input type="hidden" name="access_token" value={props.session.access_token} />
        <input type="hidden" name="access_token_ttl" value={String(props.session.access_token_ttl)} />
      </form>
    </>
  );
}

export default function OfficeView(props: { path: string; name: string; services: string[] }) {
  const [service, setService] = createSignal(props.services[0]!);
  const [session] = createResource(() => [props.path, service()] as const, ([p, s]) => sessionFor(p, s));
  let box!: HTMLDivElement;
  return (
    <div class="office" ref={box}>
      <div class="office-bar">
        <Show when={session()} fallback={<span class="muted">{session.error ? '' : t('office.opening', { service: service() })}</span>}>
          {(s) => (
            <>
              <span class="badge" classList={{ ok: s().mode === 'edit' }} data-testid="office-mode">
                {s().mode === 'edit' ? t('office.editing') : t('office.viewing')}
              </span>
              <span class="muted">{t('office.in', { service: s().service_name })}</span>
            </>
          )}
        </Show>
        <span class="grow" />
        <Show when={props.services.length > 1}>
          <select aria-label={t('office.service')} data-testid="office-service" value={service()} onChange={(e) => setService(e.currentTarget.value)}>
            <For each={props.services}>{(s) => <option value={s}>{s}</option>}</For>
          </select>
        </Show>
        <button onClick={() => void box.requestFullscreen?.().catch(() => undefined)}>{t('office.fullscreen')}</button>
      </div>
      <Show when={session.error}>
        <p class="error" role="alert">{String((session.error as Error).message ?? session.error)}</p>
      </Show>
      <Show when={session()} keyed>
        {(s) => <OfficeFrame session={s} title={t('office.frame', { name: props.name, service: s.service_name })} />}
      </Show>
    </div>
  );
}
