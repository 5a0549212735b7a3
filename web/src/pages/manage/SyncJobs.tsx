// Sync jobs (admins; docs/sync-and-trash.md): one storage folder copied or mirrored into another,
// by hand or on a cron schedule. The list with each job's schedule, next and last run; add and
// edit in a form; run now, dry run (the plan, nothing written), the kept reports, delete.
import { For, Show } from 'solid-js';
import { api, type SyncJob, type SyncReport, type SyncRun } from '../../api';
import { showDialog } from '../../components/Dialog';
import { formatDate, formatSize } from '../../format';
import { t } from '../../i18n';
import { notify, notifyError } from '../../state';
import type { FieldSpec } from './Field';
import { recordDialog } from './recordDialog';
import { type ListCall, RecordList } from './RecordList';

const FIELDS: FieldSpec[] = [
  { name: 'name', type: 'string', required: true, label: t('sync.name') },
  { name: 'src', type: 'string', required: true, label: t('sync.src') },
  { name: 'dst', type: 'string', required: true, label: t('sync.dst') },
  { name: 'mode', type: 'select', options: 'copy,sync,move,bisync', required: true, label: t('sync.mode'), help: t('sync.mode_help') },
  { name: 'compare', type: 'select', options: 'mtime,checksum,size', required: true, label: t('sync.compare') },
  { name: 'cron', type: 'string', label: t('sync.cron'), help: t('sync.cron_help') },
  { name: 'time_zone', type: 'string', label: t('sync.time_zone') },
  { name: 'include', type: 'text', label: t('sync.include'), help: t('sync.globs_help') },
  { name: 'exclude', type: 'text', label: t('sync.exclude'), help: t('sync.globs_help') },
  { name: 'min_size', type: 'string', label: t('sync.min_size') },
  { name: 'max_size', type: 'string', label: t('sync.max_size') },
  { name: 'min_age', type: 'string', label: t('sync.min_age') },
  { name: 'max_age', type: 'string', label: t('sync.max_age') },
  { name: 'transfers', type: 'number', label: t('sync.transfers') },
  { name: 'bandwidth_limit', type: 'number', label: t('sync.bandwidth_limit') },
  { name: 'delete_phase', type: 'select', options: 'after,before', required: true, label: t('sync.delete_phase') },
  { name: 'max_deletes', type: 'number', label: t('sync.max_deletes') },
  { name: 'conflict', type: 'select', options: 'newer,keep_both,src_wins', required: true, label: t('sync.conflict') },
  { name: 'dry_run', type: 'bool', label: t('sync.dry_run_only') },
  { name: 'disabled', type: 'bool', label: t('sync.disabled') },
];

const lines = (v: string) => v.split('\n').map((x) => x.trim()).filter(Boolean);
const sizeOrAge = (v: string) => (v.trim() === '' ? null : /^\d+$/.test(v.trim()) ? Number(v.trim()) : v.trim());

/** The form's values of a job (a new one: the server's defaults). */
function valuesOf(j?: SyncJob): Record<string, string> {
  const s = (v: unknown) => (v === null || v === undefined ? '' : String(v));
  return {
    name: s(j?.name), src: s(j?.src), dst: s(j?.dst), mode: j?.mode ?? 'copy', compare: j?.compare ?? 'mtime',
    cron: s(j?.schedule.cron), time_zone: j?.schedule.time_zone ?? 'UTC',
    include: (j?.filters.include ?? []).join('\n'), exclude: (j?.filters.exclude ?? []).join('\n'),
    min_size: s(j?.filters.min_size), max_size: s(j?.filters.max_size), min_age: s(j?.filters.min_age), max_age: s(j?.filters.max_age),
    transfers: s(j?.options.transfers ?? 4), bandwidth_limit: s(j?.options.bandwidth_limit ?? 0), delete_phase: j?.options.delete_phase ?? 'after',
    max_deletes: s(j?.options.max_deletes ?? -1), conflict: j?.options.conflict ?? 'newer', dry_run: String(j?.options.dry_run ?? false), disabled: String(j?.disabled ?? false),
  };
}

/** The job body of the form's values (src/server/routes/admin-sync.ts jobBody). */
function bodyOf(v: Record<string, string>, id?: number): Record<string, unknown> {
  return {
    ...(id === undefined ? {} : { id }),
    name: v.name, src: v.src, dst: v.dst, mode: v.mode, compare: v.compare,
    schedule: { cron: v.cron!.trim(), time_zone: v.time_zone!.trim() || 'UTC' },
    filters: { include: lines(v.include!), exclude: lines(v.exclude!), min_size: sizeOrAge(v.min_size!), max_size: sizeOrAge(v.max_size!), min_age: sizeOrAge(v.min_age!), max_age: sizeOrAge(v.max_age!) },
    options: { transfers: Number(v.transfers) || 4, bandwidth_limit: Number(v.bandwidth_limit) || 0, delete_phase: v.delete_phase, max_deletes: v.max_deletes === '' ? -1 : Number(v.max_deletes), conflict: v.conflict, dry_run: v.dry_run === 'true' },
    disabled: v.disabled === 'true',
  };
}

const tally = (r: SyncReport) =>
  t('sync.tally', { copied: r.copied.files, updated: r.updated.files, deleted: r.deleted.files, skipped: r.skipped.files, failed: r.failed.files, bytes: formatSize(r.copied.bytes + r.updated.bytes) });

/** A report (or a dry run's plan): its counts, then what it names, the first 50 of each list. */
function ReportView(props: { report: SyncReport }) {
  const listed = () => [
    ...props.report.items.copied.map((i) => [t('sync.copy'), i.path, i.reason] as const),
    ...props.report.items.updated.map((i) => [t('sync.update'), i.path, i.reason] as const),
    ...props.report.items.deleted.map((i) => [t('sync.delete'), i.path, i.reason] as const),
    ...props.report.failures.map((f) => [t('sync.failed'), f.path, f.reason] as const),
  ];
  return (
    <div class="sync-report">
      <p data-testid="sync-tally">{tally(props.report)}</p>
      <ul class="sync-items">
        <For each={listed().slice(0, 50)}>
          {([what, p, why]) => (
            <li>
              <strong>{what}</strong> {p} <span class="muted">{why}</span>
            </li>
          )}
        </For>
      </ul>
    </div>
  );
}

async function dryRun(j: SyncJob): Promise<void> {
  try {
    const plan = await api<SyncReport>(`/admin/sync/dry_run?id=${j.id}`, {});
    await showDialog<void>(t('sync.plan_title', { name: j.name }), () => <ReportView report={plan} />);
  } catch (e) {
    notifyError(e);
  }
}

async function reports(j: SyncJob): Promise<void> {
  try {
    const got = await api<SyncJob & { reports: SyncRun[] }>(`/admin/sync/get?id=${j.id}`);
    await showDialog<void>(t('sync.reports_title', { name: j.name }), () => (
      <Show when={got.reports.length > 0} fallback={<p class="muted">{t('sync.no_runs')}</p>}>
        <ol class="sync-runs">
          <For each={got.reports}>
            {(r) => (
              <li data-testid="sync-run">
                <span class="badge" classList={{ ok: r.state === 'succeeded', bad: r.state === 'failed' }}>{r.state}</span> {formatDate(new Date(r.started_at).toISOString())}
                {r.dry_run ? ` · ${t('sync.dry_run')}` : ''} · {Math.round(r.report.duration_ms / 100) / 10} s
                <Show when={r.error}>
                  <p class="error">{r.error}</p>
                </Show>
                <ReportView report={r.report} />
              </li>
            )}
          </For>
        </ol>
      </Show>
    ));
  } catch (e) {
    notifyError(e);
  }
}

const run = async (j: SyncJob, call: ListCall) => {
  await call(`/admin/sync/run?id=${j.id}`);
  notify(t('sync.started', { name: j.name }));
};

const lastRun = (j: SyncJob) => (j.running ? t('sync.running') : j.last_run ? `${j.last_run.state} · ${tally(j.last_run.report)}` : t('sync.never'));

export default function SyncJobs() {
  const edit = async (j?: SyncJob) => {
    const v = await recordDialog(j ? `${t('edit')} ${j.name}` : t('sync.add'), FIELDS, valuesOf(j));
    return v ? bodyOf(v, j?.id) : undefined;
  };
  return (
    <RecordList<SyncJob>
      title={t('m.sync')}
      route="/admin/sync"
      columns={[t('sync.name'), t('sync.folders'), t('sync.mode'), t('sync.schedule'), t('sync.next_run'), t('sync.last_run')]}
      cells={(j) => (
        <>
          <td data-testid="sync-name">{j.name}</td>
          <td class="path">
            {j.src} → {j.dst}
          </td>
          <td>{j.mode}</td>
          <td>{j.schedule.cron ? `${j.schedule.cron} (${j.schedule.time_zone})` : t('sync.by_hand')}</td>
          <td>{j.next_run && !j.disabled ? formatDate(new Date(j.next_run).toISOString()) : '—'}</td>
          <td data-testid="sync-last">{lastRun(j)}</td>
        </>
      )}
      name={(j) => j.name}
      edit={edit}
      buttons={(j, call) => (
        <>
          <button class="small primary" data-action="sync-run" onClick={() => void run(j, call)}>
            {t('sync.run')}
          </button>
          <button class="small" data-action="sync-dry-run" onClick={() => void dryRun(j)}>
            {t('sync.dry_run')}
          </button>
          <button class="small" data-action="sync-reports" onClick={() => void reports(j)}>
            {t('sync.reports')}
          </button>
        </>
      )}
    />
  );
}
