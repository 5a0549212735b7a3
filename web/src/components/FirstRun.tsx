// The first-run card (issue #44 item 9): an admin on an installation that still looks fresh — at
// most one storage, no user besides the admin and the guest, the announcement as shipped — is
// pointed at the three first steps. Dismissed for good in this browser.
import { createResource, createSignal, Show } from 'solid-js';
import { api, type Storage, type User } from '../api';
import { t } from '../i18n';
import { href, linkClick } from '../router';
import { isAdmin, settings } from '../state';

const KEY = 'first-run-dismissed';
/** The announcement a new installation ships with (src/settings/defaults.ts). */
const SHIPPED_ANNOUNCEMENT = '### Atrium\nA file server speaking the AList v3 API.';

async function looksFresh(): Promise<boolean> {
  const [storages, users] = await Promise.all([
    api<{ total: number; content: Storage[] | null }>('/admin/storage/list?page=1&per_page=2'),
    api<{ total: number; content: User[] | null }>('/admin/user/list?page=1&per_page=3'),
  ]);
  const people = (users.content ?? []).filter((u) => u.role !== 1 && u.role !== 2).length;
  return storages.total <= 1 && people === 0;
}

export default function FirstRun() {
  const [dismissed, setDismissed] = createSignal(localStorage.getItem(KEY) === '1');
  const [fresh] = createResource(
    () => isAdmin() && !dismissed(),
    () => looksFresh().catch(() => false),
  );
  const link = (to: string, label: string) => (
    <li>
      <a href={href(to)} onClick={(e) => linkClick(e, to)}>
        {label}
      </a>
    </li>
  );
  return (
    <Show when={isAdmin() && !dismissed() && fresh()}>
      <section class="card first-run" aria-labelledby="first-run-title" data-testid="first-run">
        <div class="section-head">
          <h2 id="first-run-title">{t('firstrun.title')}</h2>
          <span class="grow" />
          <button
            class="small"
            onClick={() => {
              localStorage.setItem(KEY, '1');
              setDismissed(true);
            }}
          >
            {t('firstrun.dismiss')}
          </button>
        </div>
        <p class="muted">{t('firstrun.text')}</p>
        <ol>
          {link('/@manage/storages/add', t('firstrun.storage'))}
          <Show when={(settings().announcement ?? '') === SHIPPED_ANNOUNCEMENT} fallback={link('/@manage/settings/site', t('firstrun.notice_done'))}>
            {link('/@manage/settings/site', t('firstrun.notice'))}
          </Show>
          {link('/@manage/users', t('firstrun.users'))}
        </ol>
      </section>
    </Show>
  );
}
