// The search box (shown when the search_index setting is not "none"): /api/fs/search under
// the current folder, results linking to their folders or files.
import Icon from './Icon';
import { createSignal, For, Show } from 'solid-js';
import { api, joinPath } from '../api';
import { formatSize } from '../format';
import { t } from '../i18n';
import { navigate } from '../router';
import { me, passwordFor } from '../state';
import { showDialog } from './Dialog';
import { iconOf } from './icons';

interface Hit {
  parent: string;
  name: string;
  is_dir: boolean;
  size: number;
  type: number;
}

/** Hits carry absolute virtual paths; the app's paths are below the user's base_path. */
function withoutBasePath(p: string): string {
  const base = (me()?.base_path ?? '/').replace(/\/+$/, '');
  return base && p.startsWith(`${base}/`) ? p.slice(base.length) : p;
}

export function openSearch(parent: string): void {
  void showDialog(t('search'), (done) => {
    const [hits, setHits] = createSignal<Hit[] | undefined>();
    const [error, setError] = createSignal('');
    const [scope, setScope] = createSignal(0);
    let input!: HTMLInputElement;
    setTimeout(() => input.focus());
    const search = async (e: Event) => {
      e.preventDefault();
      setError('');
      try {
        const r = await api<{ content: Hit[] | null; total: number }>('/fs/search', {
          parent,
          keywords: input.value,
          scope: scope(),
          page: 1,
          per_page: 100,
          password: passwordFor(parent),
        });
        setHits(r.content ?? []);
      } catch (err) {
        setError(err instanceof Error ? err.message : String(err));
      }
    };
    return (
      <div class="search">
        <form onSubmit={search} class="search-form">
          <input ref={input} type="search" name="keywords" placeholder={t('search.placeholder')} aria-label={t('search')} />
          <select aria-label="scope" value={scope()} onChange={(e) => setScope(Number(e.currentTarget.value))}>
            <option value="0">All</option>
            <option value="1">Folders</option>
            <option value="2">Files</option>
          </select>
          <button type="submit" class="primary">
            {t('search')}
          </button>
        </form>
        <Show when={error()}>
          <p class="error">{error()}</p>
        </Show>
        <Show when={hits()}>
          <Show when={hits()!.length} fallback={<p class="muted">{t('search.none')}</p>}>
            <ul class="hits">
              <For each={hits()}>
                {(h) => (
                  <li>
                    <button
                      class="link"
                      onClick={() => {
                        done();
                        navigate(withoutBasePath(joinPath(h.parent, h.name)));
                      }}
                    >
                      <Icon name={iconOf(h)} /> {h.name}
                    </button>
                    <span class="muted">
                      {h.parent} {h.is_dir ? '' : `· ${formatSize(h.size)}`}
                    </span>
                  </li>
                )}
              </For>
            </ul>
          </Show>
        </Show>
      </div>
    );
  });
}
