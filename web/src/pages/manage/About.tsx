// About: the version, build, Node.js, database engine and uptime (GET /api/admin/about), and where the docs are.
import { createResource, For, Show } from 'solid-js';
import { api, type About as AboutInfo } from '../../api';
import { basePath } from '../../config';
import { formatDate } from '../../format';
import { type MessageKey, t } from '../../i18n';
import { PageHead } from './Table';

/** The guides shipped with the installation (its docs/ folder). */
const DOC_PAGES = ['configuration.md', 'storages.md', 'access-and-security.md', 'web-ui.md', 'http-api.md', 'cli.md', 'protocols.md'];

function uptime(seconds: number): string {
  const d = Math.floor(seconds / 86_400);
  const h = Math.floor((seconds % 86_400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  return t('about.uptime_value', { d, h, m });
}

export default function About() {
  const [info] = createResource(() => api<AboutInfo>('/admin/about'));
  const rows = (a: AboutInfo): Array<[MessageKey, string, string]> => [
    ['about.version', 'version', a.version],
    ['about.api_version', 'api_version', a.api_version],
    ['about.build', 'build', a.build],
    ['about.node', 'node', a.node],
    ['about.platform', 'platform', a.platform],
    ['about.database', 'database', a.database],
    ['about.cluster', 'cluster', a.cluster ? t('about.on') : t('about.off')],
    ['about.uptime', 'uptime', uptime(a.uptime)],
    ['about.started', 'started_at', formatDate(a.started_at)],
  ];
  return (
    <div class="about-page">
      <PageHead title={t('m.about')} />
      <Show when={info()} fallback={<p class="muted">{info.error ? String(info.error.message) : t('loading')}</p>}>
        {(a) => (
          <dl class="card about-list">
            <For each={rows(a())}>
              {([label, key, value]) => (
                <div data-key={key}>
                  <dt>{t(label)}</dt>
                  <dd>{value}</dd>
                </div>
              )}
            </For>
          </dl>
        )}
      </Show>
      <div class="card">
        <h2>{t('about.docs')}</h2>
        <p>
          <a href={`${basePath}/openapi`} target="_blank" rel="noopener">
            {t('about.api_reference')}
          </a>
        </p>
        <p class="muted">{t('about.docs_hint', { pages: DOC_PAGES.join(', ') })}</p>
      </div>
    </div>
  );
}
