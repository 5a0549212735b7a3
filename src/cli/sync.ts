import type { Command } from 'commander';
import { AppError } from '../errors.js';
import { summary } from '../sync/service.js';
import type { SyncReport } from '../sync/run.js';
import { STATE } from '../tasks/manager.js';
import { dataDir, printTable, withReadyCore } from './common.js';

const when = (ms: number) => (ms > 0 ? new Date(ms).toISOString() : '');

function printReport(r: SyncReport, json: boolean): void {
  if (json) {
    console.log(JSON.stringify(r));
    return;
  }
  const rows = [...r.items.copied.map((i) => ({ ...i, op: r.dry_run ? 'copy' : 'copied' })), ...r.items.updated.map((i) => ({ ...i, op: r.dry_run ? 'update' : 'updated' })), ...r.items.deleted.map((i) => ({ ...i, op: r.dry_run ? 'delete' : 'deleted' }))];
  if (rows.length > 0) printTable(['op', 'side', 'path', 'size', 'reason'], rows.map((i) => ({ op: i.op, side: i.side, path: i.path, size: String(i.size), reason: i.reason })));
  for (const f of r.failures) console.log(`failed  ${f.path}: ${f.reason}`);
  console.log(`${summary(r)} (${r.duration_ms} ms)`);
}

/** `atrium sync list|run|dry-run NAME` (docs/cli.md): sync jobs, run in this process (the job's lease keeps a server from running it at once). */
export function syncCommands(program: Command): void {
  const sync = program.command('sync').description('sync jobs (docs/sync-and-trash.md)');

  sync
    .command('list')
    .description('list the sync jobs')
    .option('--json', 'one JSON object per line')
    .action(async (opts: { json?: boolean }, cmd: Command) => {
      await withReadyCore(dataDir(cmd), async (core) => {
        const { content } = await core.sync.list(1, 0);
        if (opts.json) {
          for (const j of content) console.log(JSON.stringify(j));
          return;
        }
        printTable(
          ['id', 'name', 'mode', 'src', 'dst', 'schedule', 'next_run', 'last_run'],
          content.map((j) => ({
            id: String(j.id),
            name: j.name,
            mode: j.mode,
            src: j.src,
            dst: j.dst,
            schedule: j.schedule.cron ? `${j.schedule.cron} ${j.schedule.time_zone}` : '',
            next_run: when(j.next_run),
            last_run: j.last_run ? `${j.last_run.state} ${when(j.last_run.finished_at || j.last_run.started_at)}` : '',
          })),
        );
      });
    });

  sync
    .command('run')
    .argument('<name>', 'the job')
    .description("run a job now, here, and print its report (exit 1 when a file failed)")
    .option('--json', 'the report as JSON')
    .action(async (name: string, opts: { json?: boolean }, cmd: Command) => {
      await withReadyCore(dataDir(cmd), async (core) => {
        await core.storages.loadAll();
        const job = await core.sync.byName(name);
        const task = await core.sync.run(job.id);
        await task.done;
        const [last] = (await core.sync.get(job.id)).reports;
        if (last && last.task_id !== undefined) printReport(last.report, opts.json ?? false);
        if (task.state !== STATE.SUCCEEDED) throw new AppError('Upstream', task.error || 'the run failed');
      });
    });

  sync
    .command('dry-run')
    .argument('<name>', 'the job')
    .description('print what a run would copy, update and delete, changing nothing')
    .option('--json', 'the plan as JSON')
    .action(async (name: string, opts: { json?: boolean }, cmd: Command) => {
      await withReadyCore(dataDir(cmd), async (core) => {
        await core.storages.loadAll();
        const job = await core.sync.byName(name);
        printReport(await core.sync.dryRun(job.id), opts.json ?? false);
      });
    });
}
