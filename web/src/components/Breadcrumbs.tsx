import Icon from './Icon';
import { For } from 'solid-js';
import { t } from '../i18n';
import { href, linkClick } from '../router';

/** `root`: where the crumbs start instead of Home (a share's page: the share itself, `/@s/<id>`). */
export default function Breadcrumbs(props: { path: string; root?: { path: string; label: string } }) {
  const top = () => props.root?.path ?? '/';
  const parts = () => {
    const below = top() === '/' ? props.path : props.path.slice(top().length);
    const segs = below.split('/').filter(Boolean);
    const at = top() === '/' ? '' : top();
    return segs.map((name, i) => ({ name, path: `${at}/${segs.slice(0, i + 1).join('/')}` }));
  };
  return (
    <nav class="crumbs" aria-label="breadcrumbs">
      <a href={href(top())} onClick={(e) => linkClick(e, top())}>
        <Icon name="home" /> {props.root?.label ?? t('home')}
      </a>
      <For each={parts()}>
        {(p) => (
          <>
            <span class="sep">/</span>
            <a href={href(p.path)} onClick={(e) => linkClick(e, p.path)}>
              {p.name}
            </a>
          </>
        )}
      </For>
    </nav>
  );
}
