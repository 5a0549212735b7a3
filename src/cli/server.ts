import { setFlagsFromString } from 'node:v8';
import { loadConfig } from '../config/load.js';
import { bootstrap, openCore } from '../core.js';
import { buildApp } from '../server/app.js';
import { listen } from '../server/listen.js';
import { startProtocolListeners } from '../protocols/listeners.js';
import { checkDataDir } from './common.js';
import { lockSqliteDatabase } from './server-lock.js';

/**
 * bin/atrium.js holds V8's young generation at its first size while the server starts (idle
 * memory); this lets it grow again as V8 sees fit (V8's default factor), once the server listens
 * and before any other command runs (a long `atrium migrate` or `index` is faster with it).
 */
export function releaseYoungGeneration(): void {
  setFlagsFromString('--semi-space-growth-factor=2');
}

/** `atrium server`: bootstrap the data folder, start the listeners, stop cleanly on signals. */
export async function runServer(dataDir: string, port?: number): Promise<void> {
  checkDataDir(dataDir);
  const loaded = loadConfig(dataDir);
  if (loaded.config.delayed_start > 0) await new Promise((r) => setTimeout(r, loaded.config.delayed_start * 1000));
  const unlock = loaded.config.database.type === 'sqlite3' ? lockSqliteDatabase(loaded.config.database.db_file) : () => undefined;
  process.on('exit', unlock);
  const core = openCore(loaded, { checkpointer: true });
  const { adminPassword } = await bootstrap(core);
  if (adminPassword) {
    // Printed once, on the run that created the admin user; never written to the log file.
    console.log(`Successfully created the admin user and the initial password is: ${adminPassword}`);
    core.log.info('created the admin user (initial password printed on the console)');
  }
  const app = await buildApp(core);
  const server = await listen(app, core, port);
  const protocols = await startProtocolListeners(core);
  core.uploads.start();
  core.trash.start();
  core.sync.start();
  server.urls.push(...protocols.map((p) => p.url));
  core.log.info({ urls: server.urls, data: core.dataDir }, 'atrium started');
  console.log(`Atrium is listening on ${server.urls.join(', ')} (data: ${core.dataDir})`);
  releaseYoungGeneration();

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    core.log.info({ signal }, 'shutting down');
    const timer = setTimeout(() => process.exit(1), 10_000);
    timer.unref();
    await Promise.all(protocols.map((p) => p.close()));
    await server.close();
    await core.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}
