import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Accounts } from './auth/accounts.js';
import { AuthCache, CachedSessionsRepo, CachedUsersRepo } from './auth/auth-cache.js';
import { LoginLimiter } from './auth/login-limiter.js';
import { TokenService } from './auth/tokens.js';
import { envAdminPassword } from './config/env.js';
import type { LoadedConfig } from './config/load.js';
import { type DbHandle, openDatabase } from './db/index.js';
import { migrate } from './db/migrations.js';
import { MetasRepo } from './db/metas.js';
import type { SessionsRepo } from './db/sessions.js';
import { SharesRepo } from './db/shares.js';
import { Shares } from './shares/service.js';
import { ShareStreams } from './shares/streams.js';
import { SshKeysRepo } from './db/ssh-keys.js';
import { S3KeysRepo } from './db/s3-keys.js';
import { AppPasswordsRepo } from './db/app-passwords.js';
import { AppPasswords } from './auth/app-passwords.js';
import { LdapDirectory } from './auth/ldap.js';
import { SsoService } from './auth/sso.js';
import { SsoFlowsRepo } from './db/sso-flows.js';
import { WebauthnRepo } from './db/webauthn.js';
import { Passkeys } from './auth/passkeys.js';
import { SettingsRepo } from './db/settings.js';
import { StoragesRepo } from './db/storages.js';
import { SearchNodesRepo } from './db/search-nodes.js';
import { TasksRepo } from './db/tasks.js';
import type { UsersRepo } from './db/users.js';
import { UploadsRepo } from './db/uploads.js';
import { type Logger, createLogger } from './logger.js';
import { ListingCache } from './fs/cache.js';
import { Fs } from './fs/fs.js';
import { Metas } from './fs/metas.js';
import { FileTypes, NameMapping } from './fs/objects.js';
import { ManualScan } from './fs/scan.js';
import { Signer } from './fs/sign.js';
import { Storages } from './fs/storages.js';
import { FsWriter } from './fs/write.js';
import { DriverFs } from './fs/driver-fs.js';
import { type OfflineOptions, OfflineDownloads } from './offline/service.js';
import { createOfflineTools } from './offline/tools.js';
import { TASK_KINDS, TaskManager, type TaskManagerOptions } from './tasks/manager.js';
import { builtinSettings, TASK_THREAD_SETTINGS, type ThreadedTaskKind } from './settings/defaults.js';
import { Settings } from './settings/service.js';
import { SearchService } from './search/service.js';
import { Cluster } from './cluster/index.js';
import { Metrics } from './metrics/metrics.js';
import { LinkFetcher, URL_FETCH_SETTING } from './net/link-fetch.js';
import { Views } from './view/view.js';
import { Archives } from './archive/service.js';
import { Uploads } from './uploads/service.js';
import { SpeedLimits } from './net/speed-limit.js';

export interface Repos {
  users: UsersRepo;
  sessions: SessionsRepo;
  settings: SettingsRepo;
  storages: StoragesRepo;
  tasks: TasksRepo;
  metas: MetasRepo;
  sshKeys: SshKeysRepo;
  s3Keys: S3KeysRepo;
  appPasswords: AppPasswordsRepo;
  webauthn: WebauthnRepo;
  searchNodes: SearchNodesRepo;
  shares: SharesRepo;
  uploads: UploadsRepo;
  ssoFlows: SsoFlowsRepo;
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
  /** OpenID Connect single sign-on (`/api/auth/sso*`). */
  sso: SsoService;
  /** Passkeys (WebAuthn): registration on the profile, sign-in on the login page. */
  passkeys: Passkeys;
  limiter: LoginLimiter;
  metas: Metas;
  /** The per-principal views of the filesystem: the only door from a front to `fs` (view/). */
  views: Views;
  /** Share links: owners' management and visitors' way in (a share is a principal of the view). */
  shares: Shares;
  storages: Storages;
  fs: Fs;
  writer: FsWriter;
  /** Requests of drivers' link URLs through the SSRF guard. */
  links: LinkFetcher;
  tasks: TaskManager;
  offline: OfflineDownloads;
  /** Archives browsed as folders and extracted by tasks (archive/). */
  archives: Archives;
  search: SearchService;
  /** OpenList's manual scan: refreshes listings below a path. */
  scan: ManualScan;
  /** OpenList's speed limits (max_*_speed), shared by every transfer. */
  speed: SpeedLimits;
  signer: Signer;
  fileTypes: FileTypes;
  names: NameMapping;
  /** Sharing with other processes (redis.url); started by the server, a no-op otherwise. */
  cluster: Cluster;
  metrics: Metrics;
  /** Resumable uploads (OpenList's multipart routes and tus): state in the database, bytes in temp_dir. */
  uploads: Uploads;
  close(): Promise<void>;
}

export interface OpenOptions {
  log?: Logger;
  /** Don't log to stdout (CLI commands other than `server`). */
  quiet?: boolean;
  offline?: OfflineOptions;
  tasks?: TaskManagerOptions;
  /** SQLite's WAL checkpoints in a worker thread (`atrium server`: no fsync on the event loop). */
  checkpointer?: boolean;
}

export function openCore(loaded: LoadedConfig, opts: OpenOptions = {}): Core {
  const { config, dataDir } = loaded;
  const log = opts.log ?? createLogger(config, { quiet: opts.quiet });
  const db = openDatabase(config.database, { checkpointer: opts.checkpointer });
  const authCache = new AuthCache();
  const repos: Repos = {
    users: new CachedUsersRepo(db, authCache),
    sessions: new CachedSessionsRepo(db, authCache),
    settings: new SettingsRepo(db),
    storages: new StoragesRepo(db),
    tasks: new TasksRepo(db),
    metas: new MetasRepo(db),
    sshKeys: new SshKeysRepo(db),
    s3Keys: new S3KeysRepo(db),
    appPasswords: new AppPasswordsRepo(db),
    webauthn: new WebauthnRepo(db),
    searchNodes: new SearchNodesRepo(db),
    shares: new SharesRepo(db),
    uploads: new UploadsRepo(db),
    ssoFlows: new SsoFlowsRepo(db),
  };
  const taskWorkers = Object.fromEntries(Object.keys(TASK_THREAD_SETTINGS).map((kind) => [kind, config.tasks[TASK_KINDS[kind as ThreadedTaskKind]].workers]));
  const settings = new Settings(repos.settings, () => builtinSettings({ taskWorkers }));
  const limiter = new LoginLimiter();
  const tokens = new TokenService(config.jwt_secret, config.token_expires_in, repos.sessions);
  const appPasswords = new AppPasswords(repos.appPasswords);
  const accounts = new Accounts(repos.users, settings, tokens, limiter, repos.sshKeys, repos.shares, appPasswords, new LdapDirectory(settings));
  const sso = new SsoService(settings, repos.users, repos.ssoFlows);
  accounts.ssoBinding = (user, value) => sso.bindingFor(user, value);
  const passkeys = new Passkeys(repos.webauthn, repos.users, settings, limiter, (user, client) => accounts.issueSession(user, client));
  accounts.onDeleteUser = async (id) => {
    await repos.s3Keys.deleteOfUser(id);
    await passkeys.removeAllOf(id);
  };
  const fileTypes = new FileTypes(settings);
  const links = new LinkFetcher(() => settings.getBool(URL_FETCH_SETTING));
  const storages = new Storages(repos.storages, log, config.temp_dir, (name) => fileTypes.ofName(name), links);
  const listingCache = new ListingCache();
  const fs = new Fs(storages, listingCache);
  storages.onChange = (id) => fs.dropStorageCache(id);
  const metas = new Metas(repos.metas);
  const tasks = new TaskManager(repos.tasks, config.tasks, log, opts.tasks);
  const applyThreads = () => {
    for (const [kind, key] of Object.entries(TASK_THREAD_SETTINGS)) tasks.setWorkers(kind as ThreadedTaskKind, settings.getNumber(key));
  };
  settings.onChange((keys) => {
    if (keys.some((k) => k.endsWith('_task_threads_num'))) applyThreads();
  });
  settings.onLoad(applyThreads);
  const speed = new SpeedLimits(settings);
  const writer = new FsWriter(fs, tasks, links, speed);
  const search = new SearchService({ repo: repos.searchNodes, settings, fs, changes: writer.changes, metas, metasRepo: repos.metas, fileTypes, log });
  storages.vfs = new DriverFs(fs, writer, links);
  const signer = new Signer(settings);
  storages.sign = (p) => signer.sign(p);
  storages.siteUrl = config.site_url;
  const offline = new OfflineDownloads(tasks, fs, writer, settings, createOfflineTools(opts.offline), config.temp_dir, log, opts.offline);
  const shareStreams = new ShareStreams();
  const archives = new Archives(fs, writer, links, settings, tasks, config.temp_dir);
  const cluster = new Cluster(config.redis, { fs, storages, settings, metas, tasks, auth: authCache, shareStreams, log });
  const metrics = new Metrics(tasks, listingCache, () => db.queries());
  storages.onDriverError = (driver, op) => metrics.driverError(driver, op);
  const core: Core = {
    dataDir,
    config,
    log,
    db,
    repos,
    settings,
    accounts,
    sso,
    passkeys,
    limiter,
    metas,
    views: undefined as unknown as Views,
    shares: undefined as unknown as Shares,
    storages,
    fs,
    writer,
    links,
    tasks,
    offline,
    archives,
    search,
    scan: new ManualScan(fs, log),
    speed,
    signer,
    fileTypes,
    names: new NameMapping(settings),
    cluster,
    metrics,
    uploads: new Uploads(repos.uploads, settings, writer, config.temp_dir, log),
    close: async () => {
      core.uploads.stop();
      await search.close();
      await tasks.stop();
      await cluster.close();
      await storages.ready();
      await db.close();
    },
  };
  core.views = new Views(core);
  core.shares = new Shares(core, repos.shares, shareStreams);
  return core;
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
