// The pages of a folder as the pagination_type setting asks: previous/next, a "load more"
// button, or more loaded when the end of the list scrolls into view.
import { Match, onCleanup, onMount, Switch } from 'solid-js';
import { t } from '../../i18n';

export default function Pager(props: { mode: string; page: number; setPage: (n: number) => void; total: number; perPage: number; loaded: number; loading: boolean }) {
  const pages = () => (props.perPage ? Math.ceil(props.total / props.perPage) : 1);
  let sentinel: HTMLDivElement | undefined;
  onMount(() => {
    if (props.mode !== 'auto_load_more' || !sentinel) return;
    const io = new IntersectionObserver((entries) => {
      if (entries[0]?.isIntersecting && !props.loading && props.loaded < props.total) props.setPage(props.page + 1);
    });
    io.observe(sentinel);
    onCleanup(() => io.disconnect());
  });
  return (
    <Switch>
      <Match when={props.mode === 'pagination' && pages() > 1}>
        <nav class="pager" aria-label="pages">
          <button disabled={props.page <= 1} onClick={() => props.setPage(props.page - 1)}>
            {t('page.prev')}
          </button>
          <span>
            {props.page} / {pages()}
          </span>
          <button disabled={props.page >= pages()} onClick={() => props.setPage(props.page + 1)}>
            {t('page.next')}
          </button>
        </nav>
      </Match>
      <Match when={props.mode === 'load_more' && props.loaded < props.total}>
        <div class="pager">
          <button disabled={props.loading} onClick={() => props.setPage(props.page + 1)}>
            {t('load_more')}
          </button>
        </div>
      </Match>
      <Match when={props.mode === 'auto_load_more'}>
        <div ref={sentinel} class="sentinel" />
      </Match>
    </Switch>
  );
}
