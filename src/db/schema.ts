import type { Generated } from 'kysely';

// Table names without the configured prefix (the prefix plugin adds it). Booleans are
// stored as integers 0/1 on every back end so rows read the same everywhere; times are
// Unix milliseconds.

export interface UsersTable {
  id: Generated<number>;
  username: string;
  pwd_hash: string;
  salt: string;
  pwd_ts: number;
  base_path: string;
  role: number;
  permission: number;
  otp_secret: string;
  /** The last TOTP time step accepted, so a code is never accepted twice. */
  otp_last_step: Generated<number>;
  allow_ldap: Generated<number>;
  disabled: number;
  sso_id: string;
  authn: string;
  /** The user's own extra roots, JSON `[{path, name}]` (migration 26). */
  roots: Generated<string | null>;
  /** Quotas of the user's own root (migration 27; 0: none). */
  quota_bytes: Generated<number>;
  quota_files: Generated<number>;
  /** Per-account limits (migration 31; 0: none): bytes/s, concurrent transfers, concurrent sessions. */
  upload_rate: Generated<number>;
  download_rate: Generated<number>;
  max_transfers: Generated<number>;
  max_sessions: Generated<number>;
}

export interface SessionsTable {
  id: string;
  user_id: number;
  created_at: number;
  expires_at: number;
  ip: string;
  user_agent: string;
}

export interface SettingItemsTable {
  key: string;
  value: string;
  help: string;
  type: string;
  options: string;
  group: number;
  flag: number;
  index: number;
}

export interface StoragesTable {
  id: Generated<number>;
  mount_path: string;
  order: number;
  driver: string;
  cache_expiration: number;
  custom_cache_policies: string;
  status: string;
  addition: string;
  remark: string;
  modified: number;
  disabled: number;
  disable_index: number;
  enable_sign: number;
  order_by: string;
  order_direction: string;
  extract_folder: string;
  web_proxy: number;
  webdav_policy: string;
  proxy_range: number;
  down_proxy_url: string;
  disable_proxy_sign: number;
  /** '' (the driver's default: on for Local without a recycle bin), 'on' or 'off' (fs/trash.ts). */
  trash: string;
  /** Days a trashed object is kept before it is purged; 0 keeps it until purged by hand. */
  trash_days: number;
}

export interface MetaTable {
  id: Generated<number>;
  path: string;
  password: string;
  p_sub: number;
  write: number;
  w_sub: number;
  hide: string;
  h_sub: number;
  readme: string;
  r_sub: number;
  header: string;
  header_sub: number;
  /** The group whose members the rule applies to (migration 32; 0: everyone). */
  group_id: Generated<number>;
}

export interface SshPublicKeysTable {
  id: Generated<number>;
  user_id: number;
  title: string;
  fingerprint: string;
  key_str: string;
  added_time: number;
  last_used_time: number;
}

/** Per-user S3 access keys: the secret is kept as given (SigV4 needs it to check a signature). */
export interface S3KeysTable {
  id: Generated<number>;
  user_id: number;
  title: string;
  access_key: string;
  secret: string;
  added_time: number;
  last_used_time: number;
}


export interface AppPasswordsTable {
  id: Generated<number>;
  user_id: number;
  name: string;
  /** hex SHA-256 of the generated secret (high-entropy, so a fast hash is enough). */
  secret_hash: string;
  added_time: number;
  last_used_time: number;
}

export interface WebauthnCredentialsTable {
  id: Generated<number>;
  user_id: number;
  /** hex SHA-256 of the credential id (the unique key). */
  credential_hash: string;
  /** base64url of the credential id. */
  credential_id: string;
  /** base64url of the COSE public key. */
  public_key: string;
  sign_count: number;
  /** comma-separated transports the authenticator named. */
  transports: string;
  aaguid: string;
  backed_up: number;
  name: string;
  creator_ip: string;
  creator_ua: string;
  added_time: number;
  last_used_time: number;
}

/** A begun registration or login: single use, until `expires_at`. */
export interface WebauthnChallengesTable {
  id: string;
  ceremony: string;
  /** The user it is bound to; 0 for a login without a user name. */
  user_id: number;
  /** Who asked (client address or user), to bound pending challenges per asker. */
  admission: string;
  challenge: string;
  rp_id: string;
  origin: string;
  expires_at: number;
}

export interface TasksTable {
  id: string;
  kind: string;
  name: string;
  creator_id: number;
  creator: string;
  creator_role: number;
  state: number;
  status: string;
  progress: number;
  error: string;
  total_bytes: number;
  retry_count: number;
  payload: string;
  /** The folder passwords the creator presented, as a JSON array (null: none); each name the task writes is decided with them. */
  creator_passwords: string | null;
  start_time: number;
  end_time: number;
  created_at: number;
  updated_at: number;
}

export interface SchemaMigrationsTable {
  version: number;
  name: string;
  applied_at: number;
}

/** One indexed object of the virtual tree (search index `database`). */
export interface SearchNodesTable {
  id: Generated<number>;
  /** Absolute virtual path of the folder holding the object. */
  parent: string;
  name: string;
  is_dir: number;
  size: number;
  /** Milliseconds; lets an update tell a replaced folder from an unchanged one. */
  modified: number;
}

/** Small key/value state of the indexer (the resume cursor of an interrupted build). */
export interface SearchStateTable {
  key: string;
  value: string;
}

/** A share link (OpenList's SharingDB): `files` is a JSON array of absolute virtual paths. */
export interface SharesTable {
  id: string;
  files: string;
  /** Unix milliseconds; 0 = never. */
  expires: number;
  pwd: string;
  accessed: number;
  max_accessed: number;
  creator_id: number;
  disabled: number;
  remark: string;
  readme: string;
  header: string;
  created_at: number;
}

/** A resumable upload (OpenList's multipart routes or tus): where it goes and how far it got. */
export interface UploadsTable {
  id: string;
  user_id: number;
  /** `multipart` (chunks by index) or `tus` (bytes by offset). */
  protocol: string;
  /** Absolute virtual path of the file to create. */
  path: string;
  size: number;
  chunk_size: number;
  /** Bytes received; for tus also the offset the next PATCH must start at. */
  received: number;
  /** receiving | completing | completed | failed_permanent | aborted */
  state: string;
  /** How many times completion was tried. */
  attempt: number;
  /** Percent of the final write into the storage. */
  progress: number;
  error: string;
  /** JSON: overwrite, password, hashes, mimetype, modified, tus metadata. */
  options: string;
  created_at: number;
  updated_at: number;
  /** JSON `[[start, end], …]`: the byte ranges recorded in upload_parts, merged (uploads/ranges.ts); null on rows from before migration 12. */
  ranges: string | null;
}

/** One received piece of an upload, a file of the staging folder holding bytes [start, start+size). */
export interface UploadPartsTable {
  upload_id: string;
  start: number;
  size: number;
  /** Where the bytes are: '' in the upload's staging file at `start`; `s3:<part number>:<etag>` in a part of the S3 multipart upload. */
  file: string;
}

/** A pending single sign-on attempt (`flow`) or a binding ticket (`ticket`), keyed by the SHA-256 of its secret. */
export interface SsoFlowsTable {
  id: string;
  kind: string;
  method: string;
  nonce: string;
  verifier: string;
  browser: string;
  ip: string;
  redirect_uri: string;
  subject: string;
  expires_at: number;
}

/** A request writing into an upload (or moving a group of its bytes to S3): one per byte range at a time. */
export interface UploadClaimsTable {
  token: string;
  upload_id: string;
  /** The first byte of the range written (a chunk's start), or -1 for a tus PATCH (one at a time per upload). */
  start: number;
  /** `host:pid` of the process holding it (a claim of a dead process on this host is void). */
  owner: string;
  /** Last sign of life, ms since the epoch (refreshed while the request runs). */
  beat: number;
}

/** One operation of the audit log (audit/): who, through which front, what, where, how it ended. */
export interface AuditEventsTable {
  id: Generated<number>;
  /** ms since the epoch */
  time: number;
  username: string;
  front: string;
  op: string;
  path: string;
  dst_path: string;
  bytes: number;
  /** `ok` or the error kind */
  result: string;
  ip: string;
  request_id: string;
}

/** An event hook (hooks/): which events it takes and what it does with them. */
export interface HooksTable {
  id: Generated<number>;
  name: string;
  /** JSON arrays: ops, path globs, user names (empty: every one) */
  events: string;
  paths: string;
  users: string;
  /** JSON: `{type: 'http', url, secret}` or `{type: 'command', command: [program, ...args]}` */
  action: string;
  disabled: number;
  created_at: number;
  updated_at: number;
}

/** One event waiting to be delivered to one hook, being delivered, or given up on (the dead letters). */
export interface HookDeliveriesTable {
  id: Generated<number>;
  hook_id: number;
  /** the event as JSON, exactly the body sent */
  event: string;
  /** `pending`, `dead` (given up: shown on the hook's page) */
  state: string;
  attempts: number;
  /** ms since the epoch: not sent again before */
  next_at: number;
  /** `host:pid` of the process sending it now ('' when none), and until when that claim holds */
  claimed_by: string;
  claimed_until: number;
  last_error: string;
  created_at: number;
}

/** The tags of one S3 object (protocols/s3/tagging.ts), with the size and time of the object they were set on. */
export interface ObjectTagsTable {
  /** SHA-256 of `path` in hex */
  path_hash: string;
  /** the object's virtual path */
  path: string;
  /** JSON array of `[key, value]` pairs, in the order given */
  tags: string;
  size: number;
  /** ms since the epoch: with `size`, tells the object tagged from one written since by another front */
  modified: number;
  updated_at: number;
}

/** What S3 knows of an object it wrote (protocols/s3/digests.ts), valid while its size and time are these. */
export interface ObjectDigestsTable {
  /** SHA-256 of `path` in hex */
  path_hash: string;
  path: string;
  size: number;
  /** ms since the epoch, as the storage reported it after the write */
  modified: number;
  /** the MD5 of the bytes in hex ('' when not known) */
  md5: string;
  /** `x-amz-meta-mtime` as the client sent it, finer than the storage keeps ('' when none) */
  mtime: string;
  updated_at: number;
}

/** One counter per kind of state processes cache (metas, settings, storages, auth), bumped on each change. */
export interface StateVersionsTable {
  kind: string;
  version: number;
}

/** WebDAV locks (fs/locks.ts): `root` a virtual path, `expires` in ms since the epoch. */
export interface LoginFailuresTable {
  ip: string;
  failures: number;
  expires: number;
}

export interface DavLocksTable {
  token: string;
  root: string;
  depth: string;
  scope: string;
  owner: string;
  timeout: number;
  expires: number;
  user_id: number;
}

/** The stable ids WOPI gives files (wopi/files.ts): `path` a virtual path, `path_hash` its SHA-256 (hex, unique). */
export interface WopiFilesTable {
  id: string;
  path: string;
  path_hash: string;
  /** The user who opened the file first (CheckFileInfo's OwnerId). */
  owner_id: number;
  created: number;
}

/** An object deleted into its storage's trash (fs/trash.ts): where it was, who deleted it, when. */
export interface TrashEntriesTable {
  id: string;
  storage_id: number;
  /** The virtual path it was deleted from. */
  path: string;
  name: string;
  size: number;
  is_dir: number;
  deleted_at: number;
  user_id: number;
  username: string;
  front: string;
}

/** A group of users (migration 26): bits and roots its members gain. */
export interface AccessGroupsTable {
  id: Generated<number>;
  name: string;
  permission: number;
  /** JSON `[{path, name}]`: virtual paths shown at each member's `/<name>`. */
  roots: string;
  /** Quotas its members' writes into its roots share (migration 27; 0: none). */
  quota_bytes: Generated<number>;
  quota_files: Generated<number>;
  /** Limits each member gets (migration 31; 0: none; the smallest of a user's and groups' applies). */
  upload_rate: Generated<number>;
  download_rate: Generated<number>;
  max_transfers: Generated<number>;
  max_sessions: Generated<number>;
}

/** What a quota's owner uses (migration 27): kept as writes happen, set again by a scan. */
export interface QuotaUsageTable {
  /** `user` or `group`. */
  owner_kind: string;
  owner_id: number;
  used_bytes: number;
  used_files: number;
  /** Milliseconds since the epoch of the last scan (0: never). */
  scanned_at: number;
}

/** Which user belongs to which group (migration 26). */
export interface GroupMembersTable {
  user_id: number;
  group_id: number;
}

/** A sync job (sync/): what it copies where, how, when (migration 30). JSON columns as the wire's objects. */
export interface SyncJobsTable {
  id: Generated<number>;
  name: string;
  src: string;
  dst: string;
  mode: string;
  compare: string;
  /** JSON: include/exclude globs, size and age bounds. */
  filters: string;
  /** 5-field cron, '' for none. */
  cron: string;
  time_zone: string;
  /** JSON: bandwidth, transfers, delete phase, max deletes, dry run, conflict rule, tolerance, reports kept. */
  options: string;
  disabled: number;
  owner_id: number;
  owner: string;
  /** The next time the schedule fires (ms; 0: none); a node claims a fire by moving it on. */
  next_run: number;
  /** The node running the job and until when its lease holds (ms). */
  lease_owner: string;
  lease_until: number;
  created_at: number;
  updated_at: number;
}

/** One run's report (the last N per job are kept). */
export interface SyncRunsTable {
  id: Generated<number>;
  job_id: number;
  task_id: string;
  dry_run: number;
  /** queued, running, succeeded, failed, canceled */
  state: string;
  started_at: number;
  finished_at: number;
  /** JSON: counts and bytes, failures, the paths copied/updated/deleted (bounded). */
  report: string;
  error: string;
}

/** What a job's last runs left in step, per relative path: both sides' size and time (skips, resumes, bisync's history). */
export interface SyncStateTable {
  job_id: number;
  path_hash: string;
  path: string;
  src_size: number;
  src_mtime: number;
  dst_size: number;
  dst_mtime: number;
}

export interface Database {
  users: UsersTable;
  sessions: SessionsTable;
  setting_items: SettingItemsTable;
  storages: StoragesTable;
  meta: MetaTable;
  ssh_public_keys: SshPublicKeysTable;
  s3_keys: S3KeysTable;
  app_passwords: AppPasswordsTable;
  webauthn_credentials: WebauthnCredentialsTable;
  webauthn_challenges: WebauthnChallengesTable;
  tasks: TasksTable;
  schema_migrations: SchemaMigrationsTable;
  search_nodes: SearchNodesTable;
  search_state: SearchStateTable;
  shares: SharesTable;
  uploads: UploadsTable;
  upload_parts: UploadPartsTable;
  sso_flows: SsoFlowsTable;
  upload_claims: UploadClaimsTable;
  audit_events: AuditEventsTable;
  hooks: HooksTable;
  hook_deliveries: HookDeliveriesTable;
  object_tags: ObjectTagsTable;
  object_digests: ObjectDigestsTable;
  state_versions: StateVersionsTable;
  dav_locks: DavLocksTable;
  login_failures: LoginFailuresTable;
  trash_entries: TrashEntriesTable;
  wopi_files: WopiFilesTable;
  access_groups: AccessGroupsTable;
  group_members: GroupMembersTable;
  quota_usage: QuotaUsageTable;
  sync_jobs: SyncJobsTable;
  sync_runs: SyncRunsTable;
  sync_state: SyncStateTable;
}
