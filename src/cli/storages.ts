import type { Command } from 'commander';
import type { Core } from '../core.js';
import { AppError } from '../errors.js';
import type { StorageRow } from '../db/storages.js';
import { storageBody } from '../server/routes/admin-storages.js';
import { parseInput } from '../server/validation.js';
import { dataDir, printTable, UsageError, withReadyCore } from './common.js';

/** A storage named by id or by mount path. */
async function storageNamed(core: Core, ref: string): Promise<StorageRow> {
  const row = /^\d+$/.test(ref) ? await core.repos.storages.byId(Number(ref)) : await core.repos.storages.byMountPath(ref);
  if (!row) throw new UsageError(`no storage ${/^\d+$/.test(ref) ? 'with id' : 'mounted at'} ${ref}`);
  return row;
}

/** `--addition JSON` merged with every `--set key=value` (values that read as JSON are parsed). */
function additionOf(json: string | undefined, sets: string[]): Record<string, unknown> {
  let addition: unknown = {};
  if (json !== undefined) {
    try {
      addition = JSON.parse(json);
    } catch (err) {
      throw new UsageError(`--addition is not JSON: ${(err as Error).message}`);
    }
    if (addition === null || typeof addition !== 'object' || Array.isArray(addition)) throw new UsageError('--addition must be a JSON object');
  }
  const out = { ...(addition as Record<string, unknown>) };
  for (const s of sets) {
    const eq = s.indexOf('=');
    if (eq <= 0) throw new UsageError(`--set needs key=value, got "${s}"`);
    const raw = s.slice(eq + 1);
    let value: unknown = raw;
    if (/^(true|false|-?\d+(\.\d+)?)$/.test(raw)) value = JSON.parse(raw);
    out[s.slice(0, eq)] = value;
  }
  return out;
}

const collect = (v: string, prev: string[]) => [...prev, v];

/** `atrium storage list|add|remove|enable|disable`, with the API's checks. */
export function storageCommands(program: Command): void {
  const storage = program.command('storage').description('storages: list, add, remove, enable, disable');

  storage
    .command('list')
    .description('list the storages')
    .action(async (_opts: unknown, cmd: Command) => {
      await withReadyCore(dataDir(cmd), async (core) => {
        const rows = await core.repos.storages.all();
        const table = rows.map((s) => ({
          id: String(s.id),
          mount_path: s.mount_path,
          driver: s.driver,
          status: s.disabled ? 'disabled' : s.status,
          order: String(s.order),
          remark: s.remark.split('\n')[0] ?? '',
        }));
        printTable(['id', 'mount_path', 'driver', 'status', 'order', 'remark'], table);
        console.log(`${rows.length} storage(s)`);
      });
    });

  storage
    .command('add <mount_path> <driver>')
    .description('add a storage and mount it, e.g. `storage add /media Local --set root_folder_path=/srv/media`')
    .option('--addition <json>', 'the driver options as a JSON object')
    .option('--set <key=value>', 'one driver option (repeatable; true/false/numbers are typed)', collect, [])
    .option('--order <n>', 'listing order', '0')
    .option('--remark <text>', 'remark', '')
    .option('--cache-expiration <minutes>', 'listing cache lifetime', '30')
    .option('--disabled', 'add it disabled')
    .action(
      async (
        mountPath: string,
        driver: string,
        opts: { addition?: string; set: string[]; order: string; remark: string; cacheExpiration: string; disabled?: boolean },
        cmd: Command,
      ) => {
        const input = parseInput(storageBody, {
          mount_path: mountPath,
          driver,
          addition: additionOf(opts.addition, opts.set),
          order: opts.order,
          remark: opts.remark,
          cache_expiration: opts.cacheExpiration,
          disabled: opts.disabled ?? false,
        });
        await withReadyCore(dataDir(cmd), async (core) => {
          const { id } = await core.storages.create(input).catch(async (err: unknown) => {
            // The API keeps a storage that failed to start (OpenList's answer carries its id); the
            // command line adds all or nothing.
            const failed = err instanceof AppError ? (err.data as { id?: number } | null)?.id : undefined;
            if (failed) await core.storages.delete(failed);
            throw err;
          });
          const row = await core.repos.storages.byId(id);
          console.log(`storage ${row?.mount_path ?? mountPath} added (id ${id}, ${row?.disabled ? 'disabled' : row?.status})`);
        });
      },
    );

  storage
    .command('remove <id|mount_path>')
    .alias('delete')
    .description('remove a storage (its files are not touched)')
    .action(async (ref: string, _opts: unknown, cmd: Command) => {
      await withReadyCore(dataDir(cmd), async (core) => {
        const row = await storageNamed(core, ref);
        await core.storages.delete(row.id);
        console.log(`storage ${row.mount_path} removed`);
      });
    });

  for (const verb of ['enable', 'disable'] as const) {
    storage
      .command(`${verb} <id|mount_path>`)
      .description(`${verb} a storage`)
      .action(async (ref: string, _opts: unknown, cmd: Command) => {
        await withReadyCore(dataDir(cmd), async (core) => {
          const row = await storageNamed(core, ref);
          await core.storages[verb](row.id);
          console.log(`storage ${row.mount_path} ${verb}d`);
        });
      });
  }
}
