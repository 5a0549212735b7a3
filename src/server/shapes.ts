// The wire's JSON objects as zod schemas, for the `data` shapes of the OpenAPI document
// (server/openapi.ts). They describe what the handlers return (a test checks real answers
// against the document); they are never used to build answers. The web UI's types of these
// objects are inferred from them (wire-types.ts).

import { z } from 'zod';

const time = z.string().describe('RFC 3339 time');

/** A file or folder (wire-api.md §6.1). */
export const objShape = z.object({
  name: z.string(),
  size: z.number(),
  is_dir: z.boolean(),
  modified: time,
  created: time,
  sign: z.string(),
  thumb: z.string(),
  type: z.number().int(),
  hashinfo: z.string(),
  hash_info: z.record(z.string(), z.string()).nullable(),
  mount_details: z
    .object({ driver_name: z.string(), total_space: z.number(), free_space: z.number(), used_space: z.number() })
    .optional()
    .describe('a folder that is a storage\'s mount point, in listings, unless hide_storage_details is on'),
});

/** A folder's listing (`/api/fs/list`). */
export const listShape = z.object({
  content: z.array(objShape).nullable(),
  total: z.number().int(),
  readme: z.string(),
  header: z.string(),
  write: z.boolean(),
  provider: z.string(),
  write_content_bypass: z.boolean(),
  direct_upload_tools: z.array(z.string()).optional().describe('uploads the browser may send straight to the storage (e.g. HttpDirect); absent when none'),
});

/** One file or folder with its link (`/api/fs/get`). */
export const getShape = objShape.extend({ raw_url: z.string(), readme: z.string(), header: z.string(), provider: z.string(), related: z.array(objShape).nullable() });

/** An account's limits (docs/access-and-security.md, limits; 0: none): bytes/s, concurrent transfers and sessions. */
export const limitsShape = z.object({
  upload_rate: z.number().int(),
  download_rate: z.number().int(),
  max_transfers: z.number().int(),
  max_sessions: z.number().int(),
});

export const userShape = z.object({
  id: z.number().int(),
  username: z.string(),
  password: z.literal(''),
  base_path: z.string(),
  role: z.number().int(),
  disabled: z.boolean(),
  permission: z.number().int(),
  sso_id: z.string(),
  allow_ldap: z.boolean(),
  /** The groups the user belongs to (docs/access-and-security.md, groups). */
  group_ids: z.array(z.number().int()),
  /** Read-only: the user's bits with their groups' (docs/access-and-security.md, effective rights). */
  effective_permission: z.number().int(),
  /** The user's own extra roots: each `path` shown at `/<name>` of their tree. */
  roots: z.array(z.object({ path: z.string(), name: z.string() })),
  /** Bytes and files the user's own root may hold (0: none). */
  quota_bytes: z.number().int(),
  quota_files: z.number().int(),
  ...limitsShape.shape,
  /** Read-only: the limits that apply with the groups' (the smallest non-zero of each). */
  effective_limits: limitsShape,
  /** `/api/me` only: what the user's own root holds now (docs/access-and-security.md, quotas). */
  used_bytes: z.number().int().optional(),
  used_files: z.number().int().optional(),
  otp: z.boolean().optional(),
});

/** A root of a tree: the virtual `path` shown at `/<name>`. */
export const rootShape = z.object({ path: z.string(), name: z.string() });

/** A group: bits and roots its members gain. */
export const groupShape = z.object({
  id: z.number().int(),
  name: z.string(),
  permission: z.number().int(),
  roots: z.array(rootShape),
  quota_bytes: z.number().int(),
  quota_files: z.number().int(),
  ...limitsShape.shape,
});

export const storageShape = z.object({
  id: z.number().int(),
  mount_path: z.string(),
  order: z.number().int(),
  driver: z.string(),
  cache_expiration: z.number().int(),
  custom_cache_policies: z.string(),
  status: z.string(),
  addition: z.string().describe('the driver options as JSON text'),
  remark: z.string(),
  modified: time,
  disabled: z.boolean(),
  disable_index: z.boolean(),
  enable_sign: z.boolean(),
  order_by: z.string(),
  order_direction: z.string(),
  extract_folder: z.string(),
  web_proxy: z.boolean(),
  webdav_policy: z.string(),
  proxy_range: z.boolean(),
  down_proxy_url: z.string(),
  trash: z.string(),
  trash_days: z.number().int(),
  disable_proxy_sign: z.boolean(),
});

export const metaShape = z.object({
  id: z.number().int(),
  path: z.string(),
  password: z.string(),
  p_sub: z.boolean(),
  write: z.boolean(),
  w_sub: z.boolean(),
  hide: z.string(),
  h_sub: z.boolean(),
  readme: z.string(),
  r_sub: z.boolean(),
  header: z.string(),
  header_sub: z.boolean(),
  /** The group whose members the rule applies to; 0: everyone (Atrium's; OpenList has no such field). */
  group_id: z.number().int(),
});

export const settingShape = z.object({
  key: z.string(),
  value: z.string(),
  help: z.string(),
  type: z.enum(['string', 'text', 'number', 'bool', 'select']),
  options: z.string(),
  group: z.number().int(),
  flag: z.number().int(),
  index: z.number().int(),
});

export const taskShape = z.object({
  id: z.string(),
  name: z.string(),
  creator: z.string(),
  creator_role: z.number().int(),
  state: z.number().int(),
  status: z.string(),
  progress: z.number(),
  start_time: time.nullable(),
  end_time: time.nullable(),
  total_bytes: z.number(),
  error: z.string(),
});

/** A page of a listing: `{content, total}`. */
export const pageShape = <S extends z.ZodType>(item: S) => z.object({ content: z.array(item), total: z.number().int() });

export const sshKeyShape = z.object({
  id: z.number().int(),
  title: z.string(),
  fingerprint: z.string(),
  added_time: time,
  last_used_time: time,
});

/** A driver's form (`/api/admin/driver/info`): its common and own items and its config. */
export const driverInfoShape = z.object({
  common: z.array(z.record(z.string(), z.unknown())),
  additional: z.array(z.record(z.string(), z.unknown())),
  config: z.record(z.string(), z.unknown()),
});

/** A user's S3 access key (`/api/me/s3key/list`); the secret is never listed. */
export const s3KeyShape = z.object({
  id: z.number().int(),
  title: z.string(),
  access_key_id: z.string(),
  added_time: time,
  last_used_time: time,
});

/** An app password (`/api/me/app_password/list`); the password itself is never listed. */
export const appPasswordShape = z.object({
  id: z.number().int(),
  name: z.string(),
  added_time: time,
  last_used_time: z.union([time, z.literal('')]).describe('RFC 3339 time, or empty until first used'),
});

/** A passkey as `getcredentials` lists it (OpenList's fields first, then Atrium's). */
export const passkeyShape = z.object({
  id: z.string().describe('the credential id, standard base64'),
  fingerprint: z.string().describe("the authenticator's AAGUID: upper-case hex bytes separated by spaces"),
  creator_ip: z.string(),
  creator_ua: z.string(),
  is_legacy: z.boolean(),
  name: z.string(),
  added_time: time,
  last_used_time: z.union([time, z.literal('')]).describe('RFC 3339 time, or empty until first used'),
});

/** A share (OpenList's SharingResp). */
export const shareShape = z.object({
  id: z.string(),
  files: z.array(z.string()).describe('absolute paths of the shared files and folders'),
  expires: time.nullable().describe('RFC 3339 time, or null for never'),
  pwd: z.string(),
  accessed: z.number().int(),
  max_accessed: z.number().int(),
  disabled: z.boolean(),
  remark: z.string(),
  readme: z.string(),
  header: z.string(),
  creator: z.string(),
  creator_role: z.number().int(),
});

/** An upload of the chunked protocol (OpenList's SessionSnapshot). */
export const uploadSnapshotShape = z.object({
  upload_id: z.string(),
  state: z.string().describe('receiving, failed_retriable, completing, completed, failed_permanent or aborted'),
  attempt: z.number().int(),
  path: z.string(),
  size: z.number(),
  chunk_size: z.number(),
  total_chunks: z.number().int(),
  received: z.array(z.array(z.number().int())).describe('ranges [first, last] of the chunks received'),
  received_bytes: z.number(),
  frontier: z.number().int().describe('the number of chunks received without a gap from the first'),
  storage_progress: z.number(),
  error: z.string().optional(),
});

/** An entry inside an archive: a file or folder without sign and thumb. */
export const archiveObjShape = objShape.omit({ mount_details: true }).extend({ sign: z.literal(''), thumb: z.literal(''), hashinfo: z.string(), hash_info: z.null() });

/** An archive entry with its children (folders: entries of this same shape; files: null). */
export const archiveTreeShape = archiveObjShape.extend({
  children: z.array(z.record(z.string(), z.unknown())).nullable().describe('for a folder, its entries (of this same shape); null for a file'),
});

/** An archive's comment and tree (`/api/fs/archive/meta`). */
export const archiveMetaShape = z.object({ comment: z.string(), encrypted: z.boolean(), content: z.array(archiveTreeShape), raw_url: z.string(), sign: z.string() });

/** A session as listed (auth/account-sessions.ts): AlistGo's fields and Atrium's kind, times and `current`. */
export const sessionShape = z.object({
  session_id: z.string(),
  user_id: z.number().int(),
  username: z.string(),
  kind: z.enum(['web', 'sftp', 'ftp', 'app_password']),
  ip: z.string(),
  ua: z.string(),
  created_at: z.number().int(),
  last_active: z.number().int(),
  status: z.number().int(),
  current: z.boolean(),
});

/** One event of the audit log (`/api/admin/audit/list`). */
export const auditEventShape = z.object({
  id: z.number().int(),
  time: z.string().describe('ISO 8601'),
  user: z.string(),
  front: z.string(),
  op: z.string(),
  path: z.string(),
  dst_path: z.string(),
  bytes: z.number().int(),
  result: z.string().describe('ok or the error kind'),
  ip: z.string(),
  request_id: z.string(),
});
