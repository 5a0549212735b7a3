import { Command, Option } from 'commander';
import { loadConfig } from '../config/load.js';
import { bootstrap, type Core, openCore } from '../core.js';
import { ConfigError } from '../errors.js';
import { randomAlnum } from '../util/random.js';
import { VERSION } from '../version.js';
import { runServer } from './server.js';

/** `--data` is a global option, so it may stand anywhere: `atrium admin set PW --data DIR`. */
const dataDir = (cmd: Command): string => (cmd.optsWithGlobals() as { data: string }).data;

/** Opens the data folder (creating config and database when new) for a one-shot command. */
async function withCore<T>(dataDir: string, fn: (core: Core) => Promise<T>): Promise<T> {
  const core = openCore(loadConfig(dataDir), { quiet: true });
  try {
    return await fn(core);
  } finally {
    await core.close();
  }
}

/**
 * Sets the admin password (creating config and database when the folder is new). Every
 * session of the admin ends, on a running server too: sessions live in the database.
 */
async function setAdminPassword(dir: string, password: string): Promise<string> {
  return withCore(dir, async (core) => {
    await bootstrap(core, { adminPassword: password });
    const user = await core.accounts.admin();
    await core.accounts.setPassword(user, password);
    return user.username;
  });
}

export function buildCli(): Command {
  const program = new Command('atrium')
    .description('Atrium file server')
    .version(VERSION.atrium, '-v, --version-flag')
    .addOption(new Option('--data <dir>', 'data folder').default('./data'));

  program
    .command('server')
    .description('start the server')
    .option('--port <n>', 'HTTP port (overrides scheme.http_port)', (v) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 0 || n > 65535) throw new ConfigError(`--port must be a port number, got "${v}"`);
      return n;
    })
    .action(async (opts: { port?: number }, cmd: Command) => {
      await runServer(dataDir(cmd), opts.port);
    });

  const admin = program
    .command('admin')
    .alias('password')
    .description("show the admin user's name; see the subcommands to reset its password")
    .action(async (_opts: unknown, cmd: Command) => {
      await withCore(dataDir(cmd), async (core) => {
        const { adminPassword } = await bootstrap(core);
        const user = await core.accounts.admin();
        console.log(`admin user: ${user.username}`);
        if (adminPassword) console.log(`initial password: ${adminPassword}`);
        console.log('set a new password with `atrium admin set NEW_PASSWORD`, or a random one with `atrium admin random`');
      });
    });

  admin
    .command('set <password>')
    .description('set the admin password')
    .action(async (password: string, _opts: unknown, cmd: Command) => {
      const user = await setAdminPassword(dataDir(cmd), password);
      console.log(`admin password set for user ${user}`);
    });

  admin
    .command('random')
    .description('set a random admin password and print it')
    .action(async (_opts: unknown, cmd: Command) => {
      const password = randomAlnum(8);
      const user = await setAdminPassword(dataDir(cmd), password);
      console.log(`admin user: ${user}`);
      console.log(`new password: ${password}`);
    });

  admin
    .command('token')
    .description('print the permanent admin token')
    .action(async (_opts: unknown, cmd: Command) => {
      await withCore(dataDir(cmd), async (core) => {
        await bootstrap(core);
        console.log(core.settings.get('token'));
      });
    });

  const storage = program.command('storage').description('storages');
  storage
    .command('list')
    .description('list the storages')
    .action(async (_opts: unknown, cmd: Command) => {
      await withCore(dataDir(cmd), async (core) => {
        await bootstrap(core);
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

  program
    .command('version')
    .description('print version information')
    .action(() => {
      console.log(`Atrium ${VERSION.atrium}`);
      console.log(`API: ${VERSION.apiVersion}`);
      console.log(`Node.js: ${process.version}`);
    });

  return program;
}

function printTable(columns: string[], rows: Array<Record<string, string>>): void {
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => (r[c] ?? '').length)));
  const line = (cells: string[]) => cells.map((v, i) => v.padEnd(widths[i]!)).join('  ').trimEnd();
  console.log(line(columns));
  for (const r of rows) console.log(line(columns.map((c) => r[c] ?? '')));
}

export async function main(argv: string[]): Promise<void> {
  try {
    await buildCli().parseAsync(argv);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`atrium: config error: ${err.message}`);
      process.exit(2);
    }
    console.error(`atrium: ${(err as Error).message}`);
    process.exit(1);
  }
}
