import { createEffect, createResource, ErrorBoundary, For, lazy, Match, Show, Suspense, Switch } from 'solid-js';
import { setUnauthorizedHandler, token } from './api';
import { mainColor } from './config';
import { DialogHost } from './components/Dialog';
import Header from './components/Header';
import Markdown from './components/Markdown';
import UploadPanel from './components/UploadPanel';
import { t } from './i18n';
import Browser from './pages/Browser';
import Login from './pages/Login';
import { navigate, path } from './router';
import { dark, isAdmin, loadMe, loadSettings, me, settings, toasts } from './state';

const Manage = lazy(() => import('./pages/manage/Manage'));

export default function App() {
  document.documentElement.style.setProperty('--accent', mainColor);
  createEffect(() => document.documentElement.classList.toggle('dark', dark()));
  setUnauthorizedHandler(() => {
    token.set('');
    void loadMe();
  });
  const [ready] = createResource(async () => {
    await Promise.all([loadSettings(), loadMe()]);
    return true;
  });
  // Without a session (and the guest disabled) every page but the login leads to the login.
  createEffect(() => {
    if (!ready() || me() || path() === '/@login') return;
    navigate(`/@login`, true);
    history.replaceState(null, '', `${location.pathname}?redirect=${encodeURIComponent(sessionStorage.getItem('last') ?? '/')}`);
  });
  createEffect(() => {
    if (!path().startsWith('/@')) sessionStorage.setItem('last', path());
  });

  return (
    <Show when={ready()} fallback={<p class="muted center">{t('loading')}</p>}>
      <Header />
      <ErrorBoundary
        fallback={(err, reset) => (
          <div class="container">
            <p class="error" role="alert">
              {t('error.generic')}: {String(err?.message ?? err)}
            </p>
            <button onClick={reset}>{t('refresh')}</button>
          </div>
        )}
      >
      <Switch>
        <Match when={path() === '/@login'}>
          <Login guestAllowed={!!me()} />
        </Match>
        <Match when={path().startsWith('/@manage') && me()}>
          <Suspense fallback={<p class="muted center">{t('loading')}</p>}>
            <Manage path={path()} admin={isAdmin()} />
          </Suspense>
        </Match>
        <Match when={me()}>
          <main class="container">
            <Show when={path() === '/' && settings().announcement}>
              <Markdown source={settings().announcement!} class="announcement" />
            </Show>
            <Show when={path()} keyed>
              {(p) => <Browser path={p} />}
            </Show>
          </main>
        </Match>
      </Switch>
      </ErrorBoundary>
      <UploadPanel />
      <DialogHost />
      <div class="toasts" role="status" aria-live="polite">
        <For each={toasts()}>{(x) => <div class={`toast ${x.kind}`}>{x.text}</div>}</For>
      </div>
    </Show>
  );
}
