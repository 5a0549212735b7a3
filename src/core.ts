import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Accounts } from './auth/accounts.js';
import { AuthCache, CachedGroupsRepo, CachedSessionsRepo, CachedUsersRepo } from './auth/auth-cache.js';
import { LoginLimiter } from './auth/login-limiter.js';
import { TokenService } from './auth/tokens.js';
import { AccountSessions } from './auth/account-sessions.js';
import { AccountMeters } from './view/meters.js';
import { envAdminPassword } from './config/env.js';
import type { LoadedConfig } from './config/load.js';
import { type DbHandle, openDatabase } from './db/index.js';
import { migrate } from './db/migrations.js';
import { MetasRepo } from './db/metas.js';
import type { SessionsRepo } from './db/sessions.js';
import { SharesRepo } from './db/shares.js';
import { Shares } from './shares/service.js';
import { ShareStreams } from './shares/streams.js';
import { APP_PASSWORDS, type AppPasswordsRepo, S3_KEYS, type S3KeysRepo, SSH_KEYS, type SshKeysRepo, UserKeysRepo } from './db/user-keys.js';
import { ObjectTagsRepo } from './db/object-tags.js';
import { ObjectDigestsRepo } from './db/object-digests.js';
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
import type { GroupsRepo } from './db/groups.js';
import { Groups } from './auth/groups.js';
import { QuotaUsageRepo } from './db/quota-usage.js';
import { groupOwner, Quotas, userOwner } from './view/quota.js';
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
import { Messenger } from './messenger/messenger.js';
import { createOfflineTools } from './offline/tools.js';
import { TaskManager, type TaskManagerOptions } from './tasks/manager.js';
import { TASK_KIND_NAMES, TASK_KINDS } from './tasks/kinds.js';
import { builtinSettings, TASK_THREAD_SETTINGS } from './settings/defaults.js';
import { Settings } from './settings/service.js';
import { SearchService } from './search/service.js';
import { Cluster } from './cluster/index.js';
import { Metrics } from './metrics/metrics.js';
import { LinkFetcher, URL_FETCH_SETTING } from './net/link-fetch.js';
import { Views } from './view/view.js';
import { TaskAccess } from './view/task-access.js';
import { Archives } from './archive/service.js';
import { Uploads } from './uploads/service.js';
import { SpeedLimits } from './net/speed-limit.js';
import { OpEvents } from './audit/events.js';
import { HooksRepo } from './db/hooks.js';
import { type HookOptions, Hooks } from './hooks/service.js';
import { AuditLog } from './audit/log.js';
import { AuditEventsRepo } from './db/audit-events.js';
import { StateVersionsRepo } from './db/state-versions.js';
import { TrashRepo } from './db/trash.js';
import { SyncJobsRepo } from './db/sync-jobs.js';
import { SyncService } from './sync/service.js';
import { TrashBin } from './fs/trash.js';
import { Thumbs } from './thumbs/service.js';
import { WopiFilesRepo } from './db/wopi-files.js';
import { WopiHost } from './wopi/host.js';
import { DbFailureStore } from './db/login-failures.js';
import { DavLocksRepo } from './db/dav-locks.js';
import { FileLocks } from './fs/locks.js';

export interface Repos {
  users: UsersRepo;
  groups: GroupsRepo;
  sessions: SessionsRepo;
  settings: SettingsRepo;
  storages: StoragesRepo;
  tasks: TasksRepo;
  metas: MetasRepo;
  sshKeys: SshKeysRepo;
  s3Keys: S3KeysRepo;
  /** S3 object tags (protocols/s3/tagging.ts). */
  objectTags: ObjectTagsRepo;
  /** The MD5s and precise modification times of objects written through S3 (protocols/s3/digests.ts). */
  objectDigests: ObjectDigestsRepo;
  appPasswords: AppPasswordsRepo;
  webauthn: WebauthnRepo;
  searchNodes: SearchNodesRepo;
  shares: SharesRepo;
  uploads: UploadsRepo;
  ssoFlows: SsoFlowsRepo;
  /** The audit log's events (audit/log.ts writes them, `/api/admin/audit/list` and `atrium audit` read them). */
  auditEvents: AuditEventsRepo;
  /** Event hooks and their outbox (hooks/). */
  hooks: HooksRepo;
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
  /** Groups of users: bits and roots their members gain (`/api/admin/group/*`, `atrium group`). */
  groups: Groups;
  /** Quotas of users and groups: usage kept as writes happen, scans (view/quota.ts). */
  quotas: Quotas;
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
  /** OpenList's channel between server parts and the admin's Messenger page (`/api/admin/message/*`). */
  messenger: Messenger;
  /** Archives browsed as folders and extracted by tasks (archive/). */
  archives: Archives;
  search: SearchService;
  /** OpenList's manual scan: refreshes listings below a path. */
  scan: ManualScan;
  /** OpenList's speed limits (max_*_speed), shared by every transfer. */
  speed: SpeedLimits;
  /** Each account's limits as they run: rates shared by a user's transfers, transfers in flight (view/meters.ts). */
  meters: AccountMeters;
  /** What each user is signed in with (web, SFTP, FTP, app passwords) and `max_sessions`. */
  sessions: AccountSessions;
  signer: Signer;
  fileTypes: FileTypes;
  names: NameMapping;
  /** Sharing with other processes (redis.url); started by the server, a no-op otherwise. */
  cluster: Cluster;
  metrics: Metrics;
  /** Resumable uploads (OpenList's multipart routes and tus): state in the database, bytes in temp_dir. */
  uploads: Uploads;
  /** Every operation as an event (audit/events.ts): the audit log and hooks consume them. */
  events: OpEvents;
  /** The audit log: every event of `events`, batched into the database (audit/log.ts). */
  audit: AuditLog;
  /** Event hooks: rules matched against `events`, delivered from the database (hooks/). */
  hooks: Hooks;
  /** WebDAV locks in the database; the view refuses other fronts' writes to a locked path (fs/locks.ts). */
  /** Thumbnails for every storage, made in the background and cached on disk (thumbs/). */
  thumbs: Thumbs;
  /** Each storage's trash: where deletes go, listed, restored, purged (fs/trash.ts). */
  trash: TrashBin;
  locks: FileLocks;
  /** The WOPI host: online offices' sessions and callbacks, on the users' live views (wopi/). */
  wopi: WopiHost;
  /** Sync jobs: runs as tasks through the owner's view, a lease per job, cron schedules (sync/). */
  sync: SyncService;
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
  /** Hook delivery timing (tests: short backoff). */
  hooks?: HookOptions;
}

/** The task manager; each task decides every name it writes on its creator's view as it is then (tasks run once the core and its views exist). */
function openTasks(loaded: LoadedConfig, repos: Repos, settings: Settings, log: Logger, opts: OpenOptions, views: () => Views): TaskManager {
  const tasks = new TaskManager(repos.tasks, loaded.config.tasks, log, { ...opts.tasks, access: new TaskAccess(views), hostRoots: [loaded.config.temp_dir, loaded.dataDir] });
  followTaskThreads(settings, tasks);
  return tasks;
}

/** Quotas of users and groups, their background scans started. */
function openQuotas(db: DbHandle, repos: Repos, fs: Fs, log: Logger): Quotas {
  const quotas = new Quotas(new QuotaUsageRepo(db), fs, log);
  quotas.start({ withQuota: async () => [...(await repos.users.withQuota()).map(userOwner), ...(await repos.groups.withQuota()).map(groupOwner)] });
  return quotas;
}

/** What each user is signed in with, and the tokens of web sign-ins (admitted against max_sessions). */
function openSessions(config: LoadedConfig['config'], repos: Repos): { sessions: AccountSessions; tokens: TokenService } {
  const sessions = new AccountSessions(repos.sessions, repos.appPasswords, async (id) => (await repos.users.byId(id))?.username);
  const tokens = new TokenService(config.jwt_secret, config.token_expires_in, repos.sessions, (user) => sessions.admit(user));
  return { sessions, tokens };
}

export function openCore(loaded: LoadedConfig, opts: OpenOptions = {}): Core {
  const { config, dataDir } = loaded;
  const log = opts.log ?? createLogger(config, { quiet: opts.quiet });
  const db = openDatabase(config.database, { checkpointer: opts.checkpointer });
  const authCache = new AuthCache();
  const repos = openRepos(db, authCache);
  const taskWorkers = Object.fromEntries(TASK_KIND_NAMES.map((kind) => [kind, config.tasks[TASK_KINDS[kind]].workers]));
  const settings = new Settings(repos.settings, () => builtinSettings({ taskWorkers }));
  const limiter = new LoginLimiter();
  const { sessions, tokens } = openSessions(config, repos);
  const appPasswords = new AppPasswords(repos.appPasswords);
  const events = new OpEvents();
  const sso = new SsoService(settings, repos.users, repos.ssoFlows);
  const { accounts, passkeys } = openAccounts({ repos, settings, tokens, limiter, appPasswords, events, sso });
  const fileTypes = new FileTypes(settings);
  const links = new LinkFetcher(() => settings.getBool(URL_FETCH_SETTING));
  const signer = new Signer(settings);
  // Storages, the fs layer over them and the virtual tree over both need each other: functions
  // each way, called once the core is built (a storage is mounted at bootstrap).
  const storages = new Storages({
    repo: repos.storages,
    log,
    tempDir: config.temp_dir,
    fileType: (name) => fileTypes.ofName(name),
    links,
    vfs: () => driverFs,
    sign: (p) => signer.sign(p),
    siteUrl: config.site_url,
    onChange: (id) => fs.dropStorageCache(id),
    onDriverError: (driver, op) => metrics.driverError(driver, op),
  });
  const listingCache = new ListingCache();
  const fs = new Fs(storages, listingCache);
  const metas = new Metas(repos.metas, repos.groups);
  const tasks = openTasks(loaded, repos, settings, log, opts, () => views);
  const speed = new SpeedLimits(settings);
  const meters = new AccountMeters((id) => repos.users.byId(id));
  const trash = new TrashBin(new TrashRepo(db), storages, log);
  const writer = new FsWriter(fs, tasks, links, speed, trash);
  const search = new SearchService({ repo: repos.searchNodes, settings, fs, changes: writer.changes, metas, metasRepo: repos.metas, fileTypes, log });
  const driverFs = new DriverFs(fs, writer, links);
  const offline = new OfflineDownloads(tasks, fs, writer, settings, createOfflineTools(opts.offline), config.temp_dir, log, opts.offline);
  const shareStreams = new ShareStreams();
  const archives = new Archives(fs, writer, links, settings, tasks, config.temp_dir);
  const hooks = new Hooks(repos.hooks, events, { allowPrivate: () => settings.getBool(URL_FETCH_SETTING), allowCommands: config.hooks.allow_commands }, log, opts.hooks);
  const cluster = new Cluster(config.redis, { fs, storages, settings, metas, tasks, auth: authCache, hooks, shareStreams, versions: new StateVersionsRepo(db), limiter, dbFailures: new DbFailureStore(db), log });
  const thumbs = new Thumbs({ fs, settings, links, fileType: (name) => fileTypes.ofName(name), dir: path.join(dataDir, 'thumbs'), log });
  const metrics = new Metrics(tasks, listingCache, () => db.queries(), () => ({ ...thumbs.stats, waiting: thumbs.waiting }));
  const locks = new FileLocks(new DavLocksRepo(db), config.redis.url !== '');
  const quotas = openQuotas(db, repos, fs, log);
  const views = new Views({ fs, writer, metas, settings, links, archives, locks, trash, events, signer, log, thumbs, quotas, meters, repos: { users: repos.users } });
  const shares = new Shares({ fs, writer, metas, settings, links, archives, locks, trash, events, signer, log, thumbs, quotas, meters, repos: { users: repos.users }, views, limiter, cluster }, repos.shares, shareStreams);
  const core: Core = {
    dataDir,
    config,
    log,
    db,
    repos,
    settings,
    accounts,
    groups: new Groups(repos.groups, repos.users, events, () => metas.changed()),
    sso,
    passkeys,
    limiter,
    metas,
    views,
    shares,
    storages,
    fs,
    writer,
    links,
    tasks,
    offline,
    messenger: new Messenger(),
    archives,
    search,
    scan: new ManualScan(fs, log),
    speed,
    meters,
    sessions,
    signer,
    fileTypes,
    names: new NameMapping(settings),
    cluster,
    metrics,
    uploads: new Uploads(repos.uploads, settings, writer, config.temp_dir, log),
    events,
    audit: new AuditLog(events, repos.auditEvents, settings, log),
    hooks,
    locks,
    trash,
    thumbs,
    quotas,
    wopi: new WopiHost({ views, shares, locks, settings, links, files: new WopiFilesRepo(db), secret: config.jwt_secret, tempDir: config.temp_dir }),
    sync: new SyncService({ repo: new SyncJobsRepo(db), views: () => views, tasks, users: repos.users, log, singleProcess: db.type === 'sqlite3' }),
    close: () => closeCore(core),
  };
  return core;
}

/** Every repository over the one database (users and sessions through the auth cache). */
function openRepos(db: DbHandle, authCache: AuthCache): Repos {
  return {
    users: new CachedUsersRepo(db, authCache),
    groups: new CachedGroupsRepo(db, authCache),
    sessions: new CachedSessionsRepo(db, authCache),
    settings: new SettingsRepo(db),
    storages: new StoragesRepo(db),
    tasks: new TasksRepo(db),
    metas: new MetasRepo(db),
    sshKeys: new UserKeysRepo(db, SSH_KEYS),
    s3Keys: new UserKeysRepo(db, S3_KEYS),
    objectTags: new ObjectTagsRepo(db),
    objectDigests: new ObjectDigestsRepo(db),
    appPasswords: new UserKeysRepo(db, APP_PASSWORDS),
    webauthn: new WebauthnRepo(db),
    searchNodes: new SearchNodesRepo(db),
    shares: new SharesRepo(db),
    uploads: new UploadsRepo(db),
    ssoFlows: new SsoFlowsRepo(db),
    auditEvents: new AuditEventsRepo(db),
    hooks: new HooksRepo(db),
  };
}

interface AccountDeps {
  repos: Repos;
  settings: Settings;
  tokens: TokenService;
  limiter: LoginLimiter;
  appPasswords: AppPasswords;
  events: OpEvents;
  sso: SsoService;
}

/** The accounts and the passkeys that sign in through them. */
function openAccounts({ repos, settings, tokens, limiter, appPasswords, events, sso }: AccountDeps): { accounts: Accounts; passkeys: Passkeys } {
  // Passkeys sign in through the accounts, which drop a deleted user's passkeys: a function each way.
  const passkeys = new Passkeys(repos.webauthn, repos.users, settings, limiter, (user, client) => accounts.issueSession(user, client));
  const accounts = new Accounts({
    users: repos.users,
    settings,
    tokens,
    limiter,
    sshKeys: repos.sshKeys,
    shares: repos.shares,
    appPasswords,
    ldap: new LdapDirectory(settings),
    events,
    groups: repos.groups,
    ssoBinding: (user, value) => sso.bindingFor(user, value),
    onDeleteUser: async (id) => {
      await repos.s3Keys.deleteOfUser(id);
      await passkeys.removeAllOf(id);
    },
  });
  return { accounts, passkeys };
}

/** Each task kind's worker count follows its `*_task_threads_num` setting. */
function followTaskThreads(settings: Settings, tasks: TaskManager): void {
  const applyThreads = () => {
    for (const kind of TASK_KIND_NAMES) tasks.setWorkers(kind, settings.getNumber(TASK_THREAD_SETTINGS[kind]));
  };
  settings.onChange((keys) => {
    if (keys.some((k) => k.endsWith('_task_threads_num'))) applyThreads();
  });
  settings.onLoad(applyThreads);
}

/** Stops the services in order; the audit events held are written before the database closes. */
async function closeCore(core: Core): Promise<void> {
  core.uploads.stop();
  core.trash.stop();
  core.quotas.stop();
  core.sync.stop();
  core.messenger.close();
  await core.search.close();
  await core.tasks.stop();
  await core.cluster.close();
  await core.storages.ready();
  // After everything that emits: the events held are written before the database closes.
  await core.audit.close();
  await core.hooks.stop();
  await core.thumbs.close();
  await core.db.close();
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
    trash: '',
    trash_days: 30,
  };
}
