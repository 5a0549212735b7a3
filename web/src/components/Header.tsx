import Icon from './Icon';
import { For, onCleanup, onMount, Show } from 'solid-js';
import { language, LANGUAGES, setLanguage, t } from '../i18n';
import { href, linkClick, navigate, path } from '../router';
import { currentFolder, dark, isAdmin, logout, me, settings, toggleDark } from '../state';
import { openSearch } from './Search';

export default function Header() {
  const logo = () => (settings().logo || '').split('\n')[0];
  const searchOn = () => !!settings().search_index && settings().search_index !== 'none';
  const inManage = () => path().startsWith('/@manage');
  // `/` opens the search, as the button's title says, unless the user is typing somewhere.
  const onKey = (e: KeyboardEvent) => {
    if (e.key !== '/' || e.ctrlKey || e.metaKey || e.altKey || !searchOn() || inManage()) return;
    const el = e.target as HTMLElement | null;
    if (el && (el.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName))) return;
    if (document.querySelector('.dialog')) return;
    e.preventDefault();
    openSearch(currentFolder());
  };
  onMount(() => document.addEventListener('keydown', onKey));
  onCleanup(() => document.removeEventListener('keydown', onKey));
  return (
    <header class="top">
      {/* at phone width only the logo shows: the link keeps the site's name */}
      <a class="brand" href={href('/')} aria-label={settings().site_title || 'Atrium'} onClick={(e) => linkClick(e, '/')}>
        <Show when={logo()}>
          <img src={logo()} alt="" width="28" height="28" />
        </Show>
        <span>{settings().site_title || 'Atrium'}</span>
      </a>
      <span class="grow" />
      <Show when={searchOn() && !inManage()}>
        <button class="icon" aria-label={t('search')} title={`${t('search')} (/)`} data-testid="search-button" onClick={() => openSearch(currentFolder())}>
          <Icon name="search" />
        </button>
      </Show>
      <select class="lang" aria-label={t('language')} title={t('language')} value={language()} data-testid="language" onChange={(e) => setLanguage(e.currentTarget.value)}>
        <For each={LANGUAGES}>{([code, name]) => <option value={code}>{name}</option>}</For>
      </select>
      <button class="icon" aria-label={t('theme.toggle')} title={t('theme.toggle')} onClick={toggleDark}>
        <Icon name={dark() ? 'sun' : 'moon'} />
      </button>
      {/* at phone width these show their icon only (the name stays their label), so the header fits 390 px */}
      <Show when={me() && me()!.role !== 1}>
        <a
          class="button fold"
          href={href(isAdmin() ? '/@manage' : '/@manage/profile')}
          aria-label={isAdmin() ? t('manage') : me()!.username}
          title={isAdmin() ? t('manage') : me()!.username}
          onClick={(e) => linkClick(e, isAdmin() ? '/@manage' : '/@manage/profile')}
        >
          <Icon name={isAdmin() ? 'settings' : 'user'} />
          <span class="label">{isAdmin() ? t('manage') : me()!.username}</span>
        </a>
      </Show>
      <Show
        when={me() && me()!.role !== 1}
        fallback={
          <a class="button fold" href={href('/@login')} aria-label={t('login')} title={t('login')} onClick={(e) => linkClick(e, '/@login')}>
            <Icon name="login" />
            <span class="label">{t('login')}</span>
          </a>
        }
      >
        <button
          class="fold"
          aria-label={t('logout')}
          title={t('logout')}
          onClick={async () => {
            await logout();
            navigate('/@login');
          }}
        >
          <Icon name="logout" />
          <span class="label">{t('logout')}</span>
        </button>
      </Show>
    </header>
  );
}
