import Icon from './Icon';
import { For } from 'solid-js';
import { t } from '../i18n';
import { href, linkClick } from '../router';

export default function Breadcrumbs(props: { path: string }) {
  const parts = () => {
    const segs = props.path.split('/').filter(Boolean);
    return segs.map((name, i) => ({ name, path: `/${segs.slice(0, i + 1).join('/')}` }));
  };
  return (
    <nav class="crumbs" aria-label="breadcrumbs">
      <a href={href('/')} onClick={(e) => linkClick(e, '/')}>
        <Icon name="home" /> {t('home')}
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
