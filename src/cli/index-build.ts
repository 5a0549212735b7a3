import type { Command } from 'commander';
import { indexKind } from '../search/service.js';
import { dataDir, UsageError, withReadyCore } from './common.js';
import { ProgressLine } from './progress.js';

/**
 * `atrium index build`: mounts the storages and builds the search index in this process, as
 * `POST /api/admin/index/build` does in the server, with a progress bar on a terminal.
 */
export function indexCommands(program: Command): void {
  const index = program.command('index').description('the search index');
  index
    .command('build')
    .description('rebuild the search index from every storage (needs the search_index setting = database)')
    .option('--enable', 'first set the search_index setting to database')
    .action(async (opts: { enable?: boolean }, cmd: Command) => {
      await withReadyCore(dataDir(cmd), async (core) => {
        if (opts.enable) await core.settings.saveMany([{ key: 'search_index', value: 'database' }]);
        const kind = indexKind(core.settings.get('search_index'));
        if (kind !== 'database') {
          throw new UsageError(
            `the search_index setting is "${core.settings.get('search_index')}": pass --enable to set it to database first`,
          );
        }
        await core.storages.loadAll();
        const progress = new ProgressLine(process.stdout, 'indexed objects');
        const timer = setInterval(() => progress.update(core.search.progress().obj_count), 250);
        const started = Date.now();
        try {
          await core.search.indexer.build();
        } finally {
          clearInterval(timer);
        }
        const result = core.search.progress();
        if (result.error) {
          progress.done(`index build failed after ${result.obj_count} objects: ${result.error}`);
          throw new Error(`index build failed: ${result.error}`);
        }
        progress.done(`indexed ${result.obj_count} objects in ${((Date.now() - started) / 1000).toFixed(1)}s`);
      });
    });
}
