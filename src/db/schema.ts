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
}
