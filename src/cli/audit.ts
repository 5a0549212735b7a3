import type { Command } from 'commander';
import { eventJson, MAX_PER_PAGE, parseFilter } from '../audit/query.js';
import { dataDir, printTable, UsageError, withReadyCore } from './common.js';

interface AuditOptions {
  user?: string;
  op?: string;
  front?: string;
  path?: string;
  since?: string;
  until?: string;
  result?: string;
  limit: string;
  json?: boolean;
}

const human = (bytes: number) => (bytes === 0 ? '' : String(bytes));

/** `atrium audit`: the audit log, newest first, with the list route's filters (docs/audit-and-hooks.md). */
export function auditCommand(program: Command): void {
  program
    .command('audit')
    .description('show the audit log, newest first (a table, or JSON lines with --json)')
    .option('--user <name>', 'only this user')
    .option('--op <op>', 'only this operation (login, download, upload, mkdir, …)')
    .option('--front <front>', 'only this front (api, raw, share, webdav, sftp, ftp, s3, task, cli)')
    .option('--path <path>', 'only this path and what is below it')
    .option('--since <time>', 'from this time on (ISO 8601)')
    .option('--until <time>', 'before this time (ISO 8601)')
    .option('--result <result>', 'only this result (ok, or an error kind such as Forbidden)')
    .option('--limit <n>', `at most this many events (1–${MAX_PER_PAGE})`, '50')
    .option('--json', 'one JSON object per line')
    .action(async (opts: AuditOptions, cmd: Command) => {
      const limit = Number(opts.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PER_PAGE) throw new UsageError(`--limit must be a whole number from 1 to ${MAX_PER_PAGE}`);
      const filter = parseFilter(opts);
      await withReadyCore(dataDir(cmd), async (core) => {
        const { events, total } = await core.repos.auditEvents.list(filter, 1, limit);
        if (opts.json) {
          for (const e of events) console.log(JSON.stringify(eventJson(e)));
          return;
        }
        printTable(
          ['time', 'user', 'front', 'op', 'path', 'dst_path', 'bytes', 'result', 'ip'],
          events.map((e) => ({ ...eventJson(e), id: String(e.id), bytes: human(e.bytes) })),
        );
        console.log(`${events.length} of ${total} event(s)`);
      });
    });
}
