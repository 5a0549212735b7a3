// Backup and restore: the export `atrium export` writes, downloaded (GET /api/admin/backup/export),
// and such a file restored (POST /api/admin/backup/import), with the report per section.
import { createSignal, For, Show } from 'solid-js';
import { ApiError, api, token, type ImportReport } from '../../api';
import { confirmAction } from '../../components/Dialog';
import { basePath } from '../../config';
import { type MessageKey, t } from '../../i18n';
import { notify, notifyError } from '../../state';
import { PageHead } from './Table';

/** The export as a file the browser saves (the route answers the file itself, or an error envelope). */
async function downloadExport(): Promise<void> {
  const res = await fetch(`${basePath}/api/admin/backup/export`, { headers: { Authorization: token.get() } });
  const disposition = res.headers.get('content-disposition') ?? '';
  if (!res.ok || !disposition.startsWith('attachment')) {
    const env = (await res.json().catch(() => ({ code: res.status, message: `HTTP ${res.status}` }))) as { code: number; message: string };
    throw new ApiError(env.code, env.message);
  }
  const name = /filename="([^"]+)"/.exec(disposition)?.[1] ?? 'atrium-backup.json';
  const url = URL.createObjectURL(await res.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

const SECTIONS: Array<[keyof ImportReport, MessageKey]> = [
  ['users', 'backup.s.users'],
  ['groups', 'backup.s.groups'],
  ['storages', 'backup.s.storages'],
  ['metas', 'backup.s.metas'],
  ['ssh_keys', 'backup.s.ssh_keys'],
  ['shares', 'backup.s.shares'],
  ['passkeys', 'backup.s.passkeys'],
];

/** One row per section: added, updated, skipped (a dash where the section has no such count). */
function ReportTable(props: { report: ImportReport }) {
  const cell = (v: unknown) => (typeof v === 'number' ? String(v) : Array.isArray(v) ? String(v.length) : '—');
  return (
    <div class="card" data-testid="backup-report">
      <h2>{t('backup.report')}</h2>
      <div class="table-wrap">
        <table class="data">
          <thead>
            <tr>
              <th>{t('backup.section')}</th>
              <th>{t('backup.added')}</th>
              <th>{t('backup.updated')}</th>
              <th>{t('backup.skipped')}</th>
            </tr>
          </thead>
          <tbody>
            <tr data-section="settings">
              <td data-label={t('backup.section')}>{t('backup.s.settings')}</td>
              <td data-label={t('backup.added')}>—</td>
              <td data-label={t('backup.updated')}>{props.report.settings}</td>
              <td data-label={t('backup.skipped')}>{props.report.unknown_settings.length}</td>
            </tr>
            <For each={SECTIONS}>
              {([key, label]) => {
                const s = props.report[key] as { added: number; updated?: number; skipped?: number | string[] };
                return (
                  <tr data-section={key}>
                    <td data-label={t('backup.section')}>{t(label)}</td>
                    <td data-label={t('backup.added')}>{s.added}</td>
                    <td data-label={t('backup.updated')}>{cell(s.updated)}</td>
                    <td data-label={t('backup.skipped')}>{cell(s.skipped)}</td>
                  </tr>
                );
              }}
            </For>
          </tbody>
        </table>
      </div>
      <Show when={props.report.users.skipped.length > 0}>
        <p class="muted">{t('backup.skipped_users', { names: props.report.users.skipped.join(', ') })}</p>
      </Show>
      <Show when={props.report.unknown_settings.length > 0}>
        <p class="muted">{t('backup.unknown_settings', { names: props.report.unknown_settings.join(', ') })}</p>
      </Show>
    </div>
  );
}

export default function Backup() {
  const [busy, setBusy] = createSignal(false);
  const [report, setReport] = createSignal<ImportReport>();
  let input!: HTMLInputElement;
  const run = async (work: () => Promise<void>) => {
    setBusy(true);
    try {
      await work();
    } catch (e) {
      notifyError(e);
    } finally {
      setBusy(false);
    }
  };
  const restore = (e: Event) => {
    e.preventDefault();
    const file = input.files?.[0];
    if (!file) return;
    void run(async () => {
      if (!(await confirmAction(t('backup.import'), t('backup.confirm', { name: file.name })))) return;
      let body: unknown;
      try {
        body = JSON.parse(await file.text());
      } catch (err) {
        throw new Error(t('backup.not_json', { error: (err as Error).message }));
      }
      setReport(undefined);
      setReport(await api<ImportReport>(`/admin/backup/import?name=${encodeURIComponent(file.name)}`, body));
      notify(t('done'));
    });
  };
  return (
    <div class="backup-page">
      <PageHead title={t('m.backup')} />
      <div class="card">
        <h2>{t('backup.export_title')}</h2>
        <p class="muted">{t('backup.export_hint')}</p>
        <div class="actions">
          <button type="button" class="primary" disabled={busy()} onClick={() => void run(downloadExport)}>
            {t('backup.export')}
          </button>
        </div>
      </div>
      <form class="card" onSubmit={restore}>
        <h2>{t('backup.import_title')}</h2>
        <p class="muted">{t('backup.import_hint')}</p>
        <label>
          {t('backup.file')}
          <input ref={input} type="file" name="backup" accept="application/json,.json" required />
        </label>
        <div class="actions">
          <button type="submit" class="primary" disabled={busy()}>
            {t('backup.import')}
          </button>
        </div>
      </form>
      <Show when={report()}>{(r) => <ReportTable report={r()} />}</Show>
    </div>
  );
}
