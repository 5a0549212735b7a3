import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Access } from './auth/access.js';
import { Accounts } from './auth/accounts.js';
import { LoginLimiter } from './auth/login-limiter.js';
import { TokenService } from './auth/tokens.js';
import { envAdminPassword } from './config/env.js';
import type { LoadedConfig } from './config/load.js';
import { type DbHandle, openDatabase } from './db/index.js';
import { migrate } from './db/migrations.js';
import { MetasRepo } from './db/metas.js';
import { SessionsRepo } from './db/sessions.js';
import { SshKeysRepo } from './db/ssh-keys.js';
import { SettingsRepo } from './db/settings.js';
import { StoragesRepo } from './db/storages.js';
import { SearchNodesRepo } from './db/search-nodes.js';
import { TasksRepo } from './db/tasks.js';
import { UsersRepo } from './db/users.js';
import { type Logger, createLogger } from './logger.js';
import { ListingCache } from './fs/cache.js';
import { Fs } from './fs/fs.js';
import { Metas } from './fs/metas.js';
import { FileTypes, NameMapping } from './fs/objects.js';
import { Signer } from './fs/sign.js';
import { Storages } from './fs/storages.js';
import { FsWriter } from './fs/write.js';
import { DriverFs } from './fs/driver-fs.js';
import { type OfflineOptions, OfflineDownloads } from './offline/service.js';
import { createOfflineTools } from './offline/tools.js';
import { TaskManager, type TaskManagerOptions } from './tasks/manager.js';
import { Settings } from './settings/service.js';
import { SearchService } from './search/service.js';
import { Cluster } from './cluster/index.js';
import { Metrics } from './metrics/metrics.js';
import { LinkFetcher, URL_FETCH_SETTING } from './net/link-fetch.js';

export interface Repos {
  users: UsersRepo;
  sessions: SessionsRepo;
  settings: SettingsRepo;
  storages: StoragesRepo;
  tasks: TasksRepo;
  metas: MetasRepo;
  sshKeys: SshKeysRepo;
  searchNodes: SearchNodesRepo;
}

/** Everything a process holds once: configuration, database, repositories and services. */
export interface Core {
  dataDir: string;
  config: LoadedConfig['config'];
  log: Logger;
  db: DbHandle;
  repos: Repos;
  settings: Settings;
  accounts: Accounts;
  limiter: LoginLimiter;
  metas: Metas;
  access: Access;
  storages: Storages;
  fs: Fs;
  writer: FsWriter;
  /** Requests of drivers' link URLs through the SSRF guard. */
  links: LinkFetcher;
  tasks: TaskManager;
  offline: OfflineDownloads;
  search: SearchService;
  signer: Signer;
  fileTypes: FileTypes;
  names: NameMapping;
  /** Sharing with other processes (redis.url); started by the server, a no-op otherwise. */
  cluster: Cluster;
  metrics: Metrics;
  close(): Promise<void>;
}

export interface OpenOptions {
  log?: Logger;
  /** Don't log to stdout (CLI commands other than `server`). */
  quiet?: boolean;
  offline?: OfflineOptions;
  tasks?: TaskManagerOptions;
}

export function openCore(loaded: LoadedConfig, opts: OpenOptions = {}): Core {
  const { config, dataDir } = loaded;
  const log = opts.log ?? createLogger(config, { quiet: opts.quiet });
  const db = openDatabase(config.database);
  const repos: Repos = {
    users: new UsersRepo(db),
    sessions: new SessionsRepo(db),
    settings: new SettingsRepo(db),
    storages: new StoragesRepo(db),
    tasks: new TasksRepo(db),
    metas: new MetasRepo(db),
    sshKeys: new SshKeysRepo(db),
    searchNodes: new SearchNodesRepo(db),
  };
  const settings = new Settings(repos.settings);
  const limiter = new LoginLimiter();
  const tokens = new TokenService(config.jwt_secret, config.token_expires_in, repos.sessions);
  const accounts = new Accounts(repos.users, settings, tokens, limiter, repos.sshKeys);
  const fileTypes = new FileTypes(settings);
  const links = new LinkFetcher(() => settings.getBool(URL_FETCH_SETTING));
  const storages = new Storages(repos.storages, log, config.temp_dir, (name) => fileTypes.ofName(name), links);
  const listingCache = new ListingCache();
  const fs = new Fs(storages, listingCache);
  storages.onChange = (id) => fs.dropStorageCache(id);
  const metas = new Metas(repos.metas);
  const tasks = new TaskManager(repos.tasks, config.tasks, log, opts.tasks);
  const writer = new FsWriter(fs, tasks, links);
  const search = new SearchService({ repo: repos.searchNodes, settings, fs, changes: writer.changes, metas, metasRepo: repos.metas, fileTypes, log });
  storages.vfs = new DriverFs(fs, writer, links);
  const offline = new OfflineDownloads(tasks, fs, writer, settings, createOfflineTools(opts.offline), config.temp_dir, log, opts.offline);
  const cluster = new Cluster(config.redis, { fs, storages, settings, metas, tasks, log });
  const metrics = new Metrics(tasks, listingCache);
  storages.onDriverError = (driver, op) => metrics.driverError(driver, op);
  return {
    dataDir,
    config,
    log,
    db,
    repos,
    settings,
    accounts,
    limiter,
    metas,
    access: new Access(metas),
    storages,
    fs,
    writer,
    links,
    tasks,
    offline,
    search,
    signer: new Signer(settings),
    fileTypes,
    names: new NameMapping(settings),
    cluster,
    metrics,
    close: async () => {
      await search.close();
      await tasks.stop();
      await cluster.close();
      await storages.ready();
      await db.close();
    },
  };
}

export interface BootstrapResult {
  /** The admin password, when the admin user was created by this call. */
  adminPassword?: string;
  /** True when the database had no users before (a new installation). */
  fresh: boolean;
}

/**
 * Brings the database to the current schema and seeds a new installation: settings, the
 * admin and guest users, and a Local storage at `/` rooted at `<data>/files`. Every entry
 * point (server and CLI) runs it, so any of them can be the first to touch a data folder.
 */
export async function bootstrap(core: Core, opts: { adminPassword?: string } = {}): Promise<BootstrapResult> {
  await migrate(core.db);
  await core.settings.reconcile();
  await core.metas.reload();
  const fresh = (await core.repos.users.count()) === 0;
  const adminPassword = await core.accounts.ensureDefaultUsers(opts.adminPassword ?? envAdminPassword());
  mkdirSync(core.config.temp_dir, { recursive: true });
  if (fresh && (await core.repos.storages.count()) === 0) {
    const root = path.join(core.dataDir, 'files');
    mkdirSync(root, { recursive: true });
    await core.repos.storages.create(defaultLocalStorage(root));
  }
  return { adminPassword, fresh };
}

function defaultLocalStorage(root: string) {
  return {
    mount_path: '/',
    order: 0,
    driver: 'Local',
    cache_expiration: 30,
    custom_cache_policies: '',
    status: 'work',
    addition: JSON.stringify({
      root_folder_path: root,
      thumbnail: false,
      thumb_cache_folder: '',
      thumb_concurrency: '16',
      show_hidden: true,
      mkdir_perm: '777',
      recycle_bin_path: 'delete permanently',
    }),
    remark: '',
    modified: Date.now(),
    disabled: false,
    disable_index: false,
    enable_sign: false,
    order_by: 'name',
    order_direction: 'asc',
    extract_folder: 'front',
    web_proxy: false,
    webdav_policy: 'native_proxy',
    proxy_range: false,
    down_proxy_url: '',
    disable_proxy_sign: false,
  };
}
