// The bar above a folder or file: where one is, and for a folder its order, layout and refresh.
import { Show } from 'solid-js';
import Breadcrumbs from '../../components/Breadcrumbs';
import Icon from '../../components/Icon';
import { t } from '../../i18n';
import { href, linkClick } from '../../router';
import { can, isGuest } from '../../state';
import { chooseLayout, layout, type SortKey, setSort, sort } from './layout';

export default function Toolbar(props: { path: string; folder: boolean; hasImages: boolean; refresh: () => void; root?: { path: string; label: string } }) {
  return (
    <div class="toolbar">
      <Breadcrumbs path={props.path} root={props.root} />
      <span class="grow" />
      <Show when={props.folder}>
        <label class="sort">
          <span class="sr-only">{t('sort')}</span>
          <select
            aria-label={t('sort')}
            value={`${sort().key}:${sort().asc ? 'asc' : 'desc'}`}
            onChange={(e) => {
              const [key, dir] = e.currentTarget.value.split(':');
              setSort({ key: key as SortKey, asc: dir === 'asc' });
            }}
          >
            <option value="name:asc">{t('col.name')} ↑</option>
            <option value="name:desc">{t('col.name')} ↓</option>
            <option value="size:asc">{t('col.size')} ↑</option>
            <option value="size:desc">{t('col.size')} ↓</option>
            <option value="modified:asc">{t('col.modified')} ↑</option>
            <option value="modified:desc">{t('col.modified')} ↓</option>
          </select>
        </label>
        <button
          class="icon"
          aria-label={layout() === 'list' ? t('view.grid') : t('view.list')}
          title={layout() === 'list' ? t('view.grid') : t('view.list')}
          onClick={() => chooseLayout(layout() === 'list' ? 'grid' : 'list')}
        >
          <Icon name={layout() === 'list' ? 'grid' : 'list'} />
        </button>
        <Show when={props.hasImages}>
          <button
            class="icon"
            aria-label={t('view.wall')}
            title={t('view.wall')}
            aria-pressed={layout() === 'wall'}
            data-testid="wall-toggle"
            onClick={() => chooseLayout(layout() === 'wall' ? 'list' : 'wall')}
          >
            <Icon name="image" />
          </button>
        </Show>
        <button class="icon" aria-label={t('refresh')} title={t('refresh')} onClick={() => props.refresh()}>
          <Icon name="refresh" />
        </button>
        {/* what was deleted on this folder's storage (the trash page: trash/Trash.tsx) */}
        <Show when={!isGuest() && can(7) && !props.root}>
          <a class="button icon" data-testid="trash-link" href={href(`/@trash${props.path === '/' ? '' : props.path}`)} aria-label={t('trash')} title={t('trash')} onClick={(e) => linkClick(e, `/@trash${props.path === '/' ? '' : props.path}`)}>
            <Icon name="trash" />
          </a>
        </Show>
      </Show>
    </div>
  );
}
