import { Command, CommanderError, Option } from 'commander';
import { bootstrap } from '../core.js';
import { AppError, ConfigError, type ErrorKind } from '../errors.js';
import { randomAlnum } from '../util/random.js';
import { VERSION } from '../version.js';
import { auditCommand } from './audit.js';
import { backupCommands } from './backup.js';
import { dataDir, UsageError, withCore } from './common.js';
import { indexCommands } from './index-build.js';
import { migrateCommand } from './migrate.js';
import { releaseYoungGeneration, runServer } from './server.js';
import { storageCommands } from './storages.js';
import { syncCommands } from './sync.js';
import { userCommands } from './users.js';
import { groupCommands } from './groups.js';
import { quotaCommands } from './quota.js';

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
    // Usage errors (unknown command or option, missing argument) reach main() as exceptions,
    // which exits 2 for every kind of bad input; subcommands inherit this.
    .exitOverride()
    .version(VERSION.atrium, '-v, --version-flag')
    .addOption(new Option('--data <dir>', 'data folder').default('./data'))
    .hook('preAction', (_program, action) => {
      if (action.name() !== 'server') releaseYoungGeneration();
    });

  program
    .command('server')
    .description('start the server')
    .option('--port <n>', 'HTTP port (overrides scheme.http_port)', (v) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 0 || n > 65535) throw new UsageError(`--port must be a port number, got "${v}"`);
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

  userCommands(program);
  groupCommands(program);
  quotaCommands(program);
  storageCommands(program);
  indexCommands(program);
  backupCommands(program);
  auditCommand(program);
  syncCommands(program);
  migrateCommand(program);

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

/**
 * The command line's answer to each error kind, as every front maps kinds in one table: the
 * kinds that say the input was wrong exit 2 (as config errors and usage errors), the others 1.
 */
const EXIT_CODE: Record<ErrorKind, 1 | 2> = {
  BadRequest: 2,
  NotFound: 2,
  Exists: 2,
  NotEmpty: 2,
  TooLarge: 2,
  QuotaExceeded: 2,
  PathTooLong: 2,
  PasswordRequired: 2,
  Unauthorized: 2,
  OtpRequired: 2,
  Forbidden: 2,
  Hidden: 2,
  Conflict: 1,
  Integrity: 1,
  Unsupported: 1,
  TooManyRequests: 1,
  Upstream: 1,
  Unavailable: 1,
  Internal: 1,
};

function exitCodeOf(err: unknown): 1 | 2 {
  if (err instanceof UsageError || err instanceof ConfigError) return 2;
  return err instanceof AppError ? EXIT_CODE[err.kind] : 1;
}

export async function main(argv: string[]): Promise<void> {
  try {
    await buildCli().parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // Commander has printed its message (or the help / version, which end with code 0).
      process.exit(err.exitCode === 0 ? 0 : 2);
    }
    if (err instanceof ConfigError) {
      console.error(`atrium: config error: ${err.message}`);
      process.exit(2);
    }
    console.error(`atrium: ${(err as Error).message}`);
    process.exit(exitCodeOf(err));
  }
}
