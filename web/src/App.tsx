import { createEffect, createResource, ErrorBoundary, For, lazy, Match, Show, Suspense, Switch } from 'solid-js';
import { setUnauthorizedHandler, token } from './api';
import { mainColor } from './config';
import { readable } from './contrast';
import { ContextMenuHost } from './components/ContextMenu';
import { DialogHost } from './components/Dialog';
import FirstRun from './components/FirstRun';
import Header from './components/Header';
import Markdown from './components/Markdown';
import UploadPanel from './components/UploadPanel';
import { t } from './i18n';
import Browser from './pages/Browser';
import Login from './pages/Login';
import './sso';
import { navigate, path } from './router';
import { dark, isAdmin, loadMe, loadSettings, me, settings, toasts } from './state';
import { setPageTitle } from './title';

const Manage = lazy(() => import('./pages/manage/Manage'));
const ShareVisit = lazy(() => import('./shares/ShareVisit'));
const Trash = lazy(() => import('./trash/Trash'));
/** Share links are opened by visitors without an account. */
const isShareVisit = (p: string) => p === '/@s' || p.startsWith('/@s/');

export default function App() {
  document.documentElement.style.setProperty('--accent', mainColor);
  // --accent-strong: white text on it reads at AA; --accent-text: accent text on the page reads at AA
  document.documentElement.style.setProperty('--accent-strong', readable(mainColor, '#ffffff'));
  createEffect(() => {
    document.documentElement.classList.toggle('dark', dark());
    document.documentElement.style.setProperty('--accent-text', dark() ? readable(mainColor, '#1d2026', true) : readable(mainColor, '#f5f6f8'));
  });
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
    if (!ready() || me() || path() === '/@login' || isShareVisit(path())) return;
    navigate(`/@login`, true);
    history.replaceState(null, '', `${location.pathname}?redirect=${encodeURIComponent(sessionStorage.getItem('last') ?? '/')}`);
  });
  createEffect(() => {
    if (!path().startsWith('/@')) sessionStorage.setItem('last', path());
  });
  // The login and share pages' tab title (folders, the trash and the manage pages name themselves: title.ts).
  createEffect(() => {
    if (path() === '/@login') setPageTitle(t('login'));
    else if (isShareVisit(path())) setPageTitle();
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
        <Match when={isShareVisit(path())}>
          <Suspense fallback={<p class="muted center">{t('loading')}</p>}>
            <Show when={path()} keyed>
              {(p) => <ShareVisit path={p} />}
            </Show>
          </Suspense>
        </Match>
        <Match when={path() === '/@login'}>
          <Login guestAllowed={!!me()} />
        </Match>
        <Match when={path().startsWith('/@manage') && me()}>
          <Suspense fallback={<p class="muted center">{t('loading')}</p>}>
            <Manage path={path()} admin={isAdmin()} />
          </Suspense>
        </Match>
        <Match when={(path() === '/@trash' || path().startsWith('/@trash/')) && me()}>
          <Suspense fallback={<p class="muted center">{t('loading')}</p>}>
            <Show when={path().slice('/@trash'.length) || '/'} keyed>
              {(p) => <Trash path={p} />}
            </Show>
          </Suspense>
        </Match>
        <Match when={me()}>
          <main class="container">
            <Show when={path() === '/'}>
              <FirstRun />
            </Show>
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
      <ContextMenuHost />
      <div class="toasts" role="status" aria-live="polite">
        <For each={toasts()}>{(x) => <div class={`toast ${x.kind}`}>{x.text}</div>}</For>
      </div>
    </Show>
  );
}
