import { type CreateTableBuilder, type Kysely, sql } from 'kysely';
import { lockId } from './mutex.js';
import type { DbHandle } from './index.js';
import { createSearchIndexes } from './search-ddl.js';

type AnyDb = Kysely<any>;

interface MigrationContext {
  db: AnyDb;
  type: DbHandle['type'];
  prefix: string;
}

interface Migration {
  version: number;
  name: string;
  up(ctx: MigrationContext): Promise<void>;
}

/** Dialect-neutral table creation: auto-increment ids, and a binary collation on MySQL so that
 * names and paths compare case-sensitively everywhere, as they do on SQLite and PostgreSQL. */
function table(ctx: MigrationContext, name: string, withId: boolean): CreateTableBuilder<string, never> {
  let t = ctx.db.schema.createTable(name).ifNotExists() as CreateTableBuilder<string, never>;
  if (withId) {
    if (ctx.type === 'postgres') t = t.addColumn('id', 'serial', (c) => c.primaryKey());
    else t = t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
  }
  if (ctx.type === 'mysql') t = t.modifyEnd(sql`ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
  return t;
}

/** Short, indexable text: VARCHAR on MySQL (TEXT cannot be indexed there without a length). */
const key = (ctx: MigrationContext, len = 255) => (ctx.type === 'mysql' ? sql.raw(`varchar(${len})`) : sql.raw('text'));
const text = (ctx: MigrationContext) => (ctx.type === 'mysql' ? sql.raw('longtext') : sql.raw('text'));

async function index(ctx: MigrationContext, tableName: string, name: string, columns: string[], unique = false) {
  let q = ctx.db.schema.createIndex(`${ctx.prefix}${name}`).on(tableName).columns(columns);
  if (unique) q = q.unique();
  if (ctx.type !== 'mysql') q = q.ifNotExists();
  await q.execute();
}

/** Migration 1: users, unique by name. */
async function usersTable(ctx: MigrationContext): Promise<void> {
  await table(ctx, 'users', true)
    .addColumn('username', key(ctx), (c) => c.notNull())
    .addColumn('pwd_hash', key(ctx, 128), (c) => c.notNull().defaultTo(''))
    .addColumn('salt', key(ctx, 64), (c) => c.notNull().defaultTo(''))
    .addColumn('pwd_ts', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('base_path', text(ctx), (c) => c.notNull())
    .addColumn('role', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('permission', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('otp_secret', key(ctx, 128), (c) => c.notNull().defaultTo(''))
    .addColumn('disabled', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('sso_id', key(ctx), (c) => c.notNull().defaultTo(''))
    .addColumn('authn', text(ctx), (c) => c.notNull())
    .execute();
  await index(ctx, 'users', 'users_username', ['username'], true);
}

/** Migration 1: sign-in sessions, by user and expiry. */
async function sessionsTable(ctx: MigrationContext): Promise<void> {
  await table(ctx, 'sessions', false)
    .addColumn('id', key(ctx, 64), (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('ip', key(ctx, 64), (c) => c.notNull().defaultTo(''))
    .addColumn('user_agent', text(ctx), (c) => c.notNull())
    .execute();
  await index(ctx, 'sessions', 'sessions_user', ['user_id']);
  await index(ctx, 'sessions', 'sessions_expires', ['expires_at']);
}

/** Migration 1: setting_items. */
async function settingItemsTable(ctx: MigrationContext): Promise<void> {
  await table(ctx, 'setting_items', false)
    .addColumn('key', key(ctx), (c) => c.primaryKey())
    .addColumn('value', text(ctx), (c) => c.notNull())
    .addColumn('help', text(ctx), (c) => c.notNull())
    .addColumn('type', key(ctx, 32), (c) => c.notNull().defaultTo('string'))
    .addColumn('options', text(ctx), (c) => c.notNull())
    .addColumn('group', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('flag', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('index', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

/** Migration 1: storages, unique by mount path. */
async function storagesTable(ctx: MigrationContext): Promise<void> {
  await table(ctx, 'storages', true)
    .addColumn('mount_path', key(ctx, 512), (c) => c.notNull())
    .addColumn('order', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('driver', key(ctx, 64), (c) => c.notNull())
    .addColumn('cache_expiration', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('custom_cache_policies', text(ctx), (c) => c.notNull())
    .addColumn('status', text(ctx), (c) => c.notNull())
    .addColumn('addition', text(ctx), (c) => c.notNull())
    .addColumn('remark', text(ctx), (c) => c.notNull())
    .addColumn('modified', 'bigint', (c) => c.notNull())
    .addColumn('disabled', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('disable_index', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('enable_sign', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('order_by', key(ctx, 32), (c) => c.notNull().defaultTo(''))
    .addColumn('order_direction', key(ctx, 32), (c) => c.notNull().defaultTo(''))
    .addColumn('extract_folder', key(ctx, 32), (c) => c.notNull().defaultTo(''))
    .addColumn('web_proxy', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('webdav_policy', key(ctx, 32), (c) => c.notNull().defaultTo(''))
    .addColumn('proxy_range', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('down_proxy_url', text(ctx), (c) => c.notNull())
    .addColumn('disable_proxy_sign', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await index(ctx, 'storages', 'storages_mount_path', ['mount_path'], true);
}

/** Migration 1: meta (path rules), unique by path. */
async function metaTable(ctx: MigrationContext): Promise<void> {
  await table(ctx, 'meta', true)
    .addColumn('path', key(ctx, 512), (c) => c.notNull())
    .addColumn('password', text(ctx), (c) => c.notNull())
    .addColumn('p_sub', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('write', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('w_sub', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('hide', text(ctx), (c) => c.notNull())
    .addColumn('h_sub', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('readme', text(ctx), (c) => c.notNull())
    .addColumn('r_sub', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('header', text(ctx), (c) => c.notNull())
    .addColumn('header_sub', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await index(ctx, 'meta', 'meta_path', ['path'], true);
}

/** Migration 1: ssh_public_keys, unique by user and title. */
async function sshKeysTable(ctx: MigrationContext): Promise<void> {
  await table(ctx, 'ssh_public_keys', true)
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('title', key(ctx), (c) => c.notNull())
    .addColumn('fingerprint', key(ctx, 128), (c) => c.notNull())
    .addColumn('key_str', text(ctx), (c) => c.notNull())
    .addColumn('added_time', 'bigint', (c) => c.notNull())
    .addColumn('last_used_time', 'bigint', (c) => c.notNull())
    .execute();
  await index(ctx, 'ssh_public_keys', 'ssh_keys_user_title', ['user_id', 'title'], true);
}

/** Migration 1: tasks, by kind and state. */
async function tasksTable(ctx: MigrationContext): Promise<void> {
  await table(ctx, 'tasks', false)
    .addColumn('id', key(ctx, 64), (c) => c.primaryKey())
    .addColumn('kind', key(ctx, 64), (c) => c.notNull())
    .addColumn('name', text(ctx), (c) => c.notNull())
    .addColumn('creator_id', 'integer', (c) => c.notNull())
    .addColumn('creator', key(ctx), (c) => c.notNull())
    .addColumn('creator_role', 'integer', (c) => c.notNull())
    .addColumn('state', 'integer', (c) => c.notNull())
    .addColumn('status', text(ctx), (c) => c.notNull())
    .addColumn('progress', 'double precision', (c) => c.notNull().defaultTo(0))
    .addColumn('error', text(ctx), (c) => c.notNull())
    .addColumn('total_bytes', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('retry_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('payload', text(ctx), (c) => c.notNull())
    .addColumn('start_time', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('end_time', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await index(ctx, 'tasks', 'tasks_kind_state', ['kind', 'state']);
}

export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: 'initial tables',
    async up(ctx) {
      await usersTable(ctx);
      await sessionsTable(ctx);
      await settingItemsTable(ctx);
      await storagesTable(ctx);
      await metaTable(ctx);
      await sshKeysTable(ctx);
      await tasksTable(ctx);
    },
  },
  {
    version: 2,
    name: 'users.otp_last_step: refuse a TOTP code used before',
    async up(ctx) {
      await ctx.db.schema.alterTable('users').addColumn('otp_last_step', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
    },
  },
  {
    version: 3,
    name: 'search index: search_nodes with a substring index per engine, search_state',
    up: (ctx) => createSearchTables(ctx),
  },
  {
    version: 4,
    name: 'shares: share links (OpenList v4 sharing)',
    async up(ctx) {
      await table(ctx, 'shares', false)
        .addColumn('id', key(ctx, 64), (c) => c.primaryKey())
        .addColumn('files', text(ctx), (c) => c.notNull())
        .addColumn('expires', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('pwd', key(ctx), (c) => c.notNull().defaultTo(''))
        .addColumn('accessed', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('max_accessed', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('creator_id', 'integer', (c) => c.notNull())
        .addColumn('disabled', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('remark', text(ctx), (c) => c.notNull())
        .addColumn('readme', text(ctx), (c) => c.notNull())
        .addColumn('header', text(ctx), (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await index(ctx, 'shares', 'shares_creator', ['creator_id']);
    },
  },
  {
    version: 5,
    name: 'resumable uploads: uploads and upload_parts',
    async up(ctx) {
      await table(ctx, 'uploads', false)
        .addColumn('id', key(ctx, 64), (c) => c.primaryKey())
        .addColumn('user_id', 'integer', (c) => c.notNull())
        .addColumn('protocol', key(ctx, 16), (c) => c.notNull())
        .addColumn('path', text(ctx), (c) => c.notNull())
        .addColumn('size', 'bigint', (c) => c.notNull())
        .addColumn('chunk_size', 'bigint', (c) => c.notNull())
        .addColumn('received', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('state', key(ctx, 32), (c) => c.notNull())
        .addColumn('attempt', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('progress', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('error', text(ctx), (c) => c.notNull())
        .addColumn('options', text(ctx), (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await index(ctx, 'uploads', 'uploads_user_state', ['user_id', 'state']);
      await index(ctx, 'uploads', 'uploads_updated', ['updated_at']);
      await table(ctx, 'upload_parts', false)
        .addColumn('upload_id', key(ctx, 64), (c) => c.notNull())
        .addColumn('start', 'bigint', (c) => c.notNull())
        .addColumn('size', 'bigint', (c) => c.notNull())
        .addColumn('file', key(ctx, 128), (c) => c.notNull())
        .addPrimaryKeyConstraint(`${ctx.prefix}upload_parts_pk`, ['upload_id', 'start'])
        .execute();
    },
  },
  {
    version: 6,
    name: 's3_keys: per-user S3 access keys',
    async up(ctx) {
      await table(ctx, 's3_keys', true)
        .addColumn('user_id', 'integer', (c) => c.notNull())
        .addColumn('title', key(ctx), (c) => c.notNull())
        .addColumn('access_key', key(ctx, 64), (c) => c.notNull())
        .addColumn('secret', key(ctx, 128), (c) => c.notNull())
        .addColumn('added_time', 'bigint', (c) => c.notNull())
        .addColumn('last_used_time', 'bigint', (c) => c.notNull())
        .execute();
      await index(ctx, 's3_keys', 's3_keys_access_key', ['access_key'], true);
      await index(ctx, 's3_keys', 's3_keys_user', ['user_id']);
    },
  },
  {
    version: 7,
    name: 'app_passwords: per-user secrets for WebDAV, SFTP and FTP',
    async up(ctx) {
      await table(ctx, 'app_passwords', true)
        .addColumn('user_id', 'integer', (c) => c.notNull())
        .addColumn('name', key(ctx), (c) => c.notNull())
        .addColumn('secret_hash', key(ctx, 64), (c) => c.notNull())
        .addColumn('added_time', 'bigint', (c) => c.notNull())
        .addColumn('last_used_time', 'bigint', (c) => c.notNull().defaultTo(0))
        .execute();
      await index(ctx, 'app_passwords', 'app_passwords_user_name', ['user_id', 'name'], true);
    },
  },
  {
    version: 8,
    name: 'users.allow_ldap: whether the user may sign in with the directory password',
    async up(ctx) {
      await ctx.db.schema.alterTable('users').addColumn('allow_ldap', 'integer', (c) => c.notNull().defaultTo(1)).execute();
      // As new installs create them: a directory entry named like the admin or the guest must
      // not take that account over.
      await ctx.db.updateTable('users').set({ allow_ldap: 0 }).where('role', 'in', [1, 2]).execute();
    },
  },
  {
    version: 9,
    name: 'webauthn: passkeys per user and their pending challenges',
    async up(ctx) {
      await table(ctx, 'webauthn_credentials', true)
        .addColumn('user_id', 'integer', (c) => c.notNull())
        // hex SHA-256 of the credential id: a short unique key on every engine (ids reach 1 023 bytes)
        .addColumn('credential_hash', key(ctx, 64), (c) => c.notNull())
        .addColumn('credential_id', text(ctx), (c) => c.notNull())
        .addColumn('public_key', text(ctx), (c) => c.notNull())
        .addColumn('sign_count', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('transports', key(ctx), (c) => c.notNull().defaultTo(''))
        .addColumn('aaguid', key(ctx, 64), (c) => c.notNull().defaultTo(''))
        .addColumn('backed_up', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('name', key(ctx), (c) => c.notNull())
        .addColumn('creator_ip', key(ctx, 64), (c) => c.notNull().defaultTo(''))
        .addColumn('creator_ua', text(ctx), (c) => c.notNull())
        .addColumn('added_time', 'bigint', (c) => c.notNull())
        .addColumn('last_used_time', 'bigint', (c) => c.notNull().defaultTo(0))
        .execute();
      await index(ctx, 'webauthn_credentials', 'webauthn_credentials_hash', ['credential_hash'], true);
      await index(ctx, 'webauthn_credentials', 'webauthn_credentials_user', ['user_id']);
      await table(ctx, 'webauthn_challenges', false)
        .addColumn('id', key(ctx, 64), (c) => c.primaryKey())
        .addColumn('ceremony', key(ctx, 16), (c) => c.notNull())
        .addColumn('user_id', 'integer', (c) => c.notNull())
        .addColumn('admission', key(ctx, 128), (c) => c.notNull())
        .addColumn('challenge', key(ctx, 128), (c) => c.notNull())
        .addColumn('rp_id', key(ctx), (c) => c.notNull())
        .addColumn('origin', key(ctx), (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await index(ctx, 'webauthn_challenges', 'webauthn_challenges_admission', ['admission']);
      await index(ctx, 'webauthn_challenges', 'webauthn_challenges_expires', ['expires_at']);
    },
  },
  {
    version: 10,
    name: 'sso_flows: pending single sign-on attempts and binding tickets (short-lived, single use)',
    async up(ctx) {
      await table(ctx, 'sso_flows', false)
        .addColumn('id', key(ctx, 64), (c) => c.primaryKey())
        .addColumn('kind', key(ctx, 16), (c) => c.notNull())
        .addColumn('method', key(ctx, 32), (c) => c.notNull().defaultTo(''))
        .addColumn('nonce', key(ctx, 128), (c) => c.notNull().defaultTo(''))
        .addColumn('verifier', key(ctx, 128), (c) => c.notNull().defaultTo(''))
        .addColumn('browser', key(ctx, 64), (c) => c.notNull().defaultTo(''))
        .addColumn('ip', key(ctx, 64), (c) => c.notNull().defaultTo(''))
        .addColumn('redirect_uri', text(ctx), (c) => c.notNull())
        .addColumn('subject', text(ctx), (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await index(ctx, 'sso_flows', 'sso_flows_expires', ['expires_at']);
      await index(ctx, 'sso_flows', 'sso_flows_ip', ['ip']);
      // Single sign-on never worked before this version, so no account is bound yet: the identity
      // claim moves from OpenList's `name` (a display name) to `sub` (unique and stable), once.
      await ctx.db.updateTable('setting_items').set({ value: 'sub' }).where('key', '=', 'sso_oidc_username_key').where('value', '=', 'name').execute();
    },
  },
  {
    version: 11,
    name: 'upload_claims: requests writing into a resumable upload (one writer per byte range)',
    async up(ctx) {
      await table(ctx, 'upload_claims', false)
        .addColumn('upload_id', key(ctx, 64), (c) => c.notNull())
        .addColumn('start', 'bigint', (c) => c.notNull())
        .addColumn('token', key(ctx, 64), (c) => c.notNull())
        .addColumn('owner', key(ctx, 255), (c) => c.notNull())
        .addColumn('beat', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint(`${ctx.prefix}upload_claims_pk`, ['upload_id', 'start'])
        .execute();
      await index(ctx, 'upload_claims', 'upload_claims_token', ['token']);
    },
  },
  {
    version: 12,
    name: 'uploads.ranges: the received byte ranges kept with the upload (a chunk no longer reads every part)',
    async up(ctx) {
      // Nullable: rows of unfinished uploads made before have none and are read from their parts.
      await ctx.db.schema.alterTable('uploads').addColumn('ranges', text(ctx)).execute();
    },
  },
  {
    version: 13,
    name: 'audit_events: the audit log of every operation',
    async up(ctx) {
      await table(ctx, 'audit_events', true)
        .addColumn('time', 'bigint', (c) => c.notNull())
        .addColumn('username', key(ctx), (c) => c.notNull())
        .addColumn('front', key(ctx, 16), (c) => c.notNull())
        .addColumn('op', key(ctx, 32), (c) => c.notNull())
        .addColumn('path', text(ctx), (c) => c.notNull())
        .addColumn('dst_path', text(ctx), (c) => c.notNull())
        .addColumn('bytes', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('result', key(ctx, 32), (c) => c.notNull())
        .addColumn('ip', key(ctx, 64), (c) => c.notNull())
        .addColumn('request_id', key(ctx, 64), (c) => c.notNull())
        .execute();
      await index(ctx, 'audit_events', 'audit_events_time', ['time']);
      await index(ctx, 'audit_events', 'audit_events_user_time', ['username', 'time']);
      await index(ctx, 'audit_events', 'audit_events_op_time', ['op', 'time']);
    },
  },
  {
    version: 14,
    name: 'hooks and hook_deliveries: event hooks and their outbox (pending and dead letters)',
    async up(ctx) {
      await table(ctx, 'hooks', true)
        .addColumn('name', key(ctx), (c) => c.notNull())
        .addColumn('events', text(ctx), (c) => c.notNull())
        .addColumn('paths', text(ctx), (c) => c.notNull())
        .addColumn('users', text(ctx), (c) => c.notNull())
        .addColumn('action', text(ctx), (c) => c.notNull())
        .addColumn('disabled', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await index(ctx, 'hooks', 'hooks_name', ['name'], true);
      await table(ctx, 'hook_deliveries', true)
        .addColumn('hook_id', 'integer', (c) => c.notNull())
        .addColumn('event', text(ctx), (c) => c.notNull())
        .addColumn('state', key(ctx, 16), (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('next_at', 'bigint', (c) => c.notNull())
        .addColumn('claimed_by', key(ctx, 128), (c) => c.notNull())
        .addColumn('claimed_until', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('last_error', text(ctx), (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await index(ctx, 'hook_deliveries', 'hook_deliveries_state_next', ['state', 'next_at']);
      await index(ctx, 'hook_deliveries', 'hook_deliveries_hook_state', ['hook_id', 'state']);
    },
  },
  {
    version: 15,
    name: 'object_tags: S3 object tags, keyed by virtual path (a hash of it: paths are longer than an index takes)',
    async up(ctx) {
      await table(ctx, 'object_tags', false)
        .addColumn('path_hash', key(ctx, 64), (c) => c.primaryKey())
        .addColumn('path', text(ctx), (c) => c.notNull())
        .addColumn('tags', text(ctx), (c) => c.notNull())
        .addColumn('size', 'bigint', (c) => c.notNull())
        .addColumn('modified', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
  {
    version: 16,
    name: 'object_digests: the MD5 and the modification time as sent of objects written through S3',
    async up(ctx) {
      await table(ctx, 'object_digests', false)
        .addColumn('path_hash', key(ctx, 64), (c) => c.primaryKey())
        .addColumn('path', text(ctx), (c) => c.notNull())
        .addColumn('size', 'bigint', (c) => c.notNull())
        .addColumn('modified', 'bigint', (c) => c.notNull())
        .addColumn('md5', key(ctx, 32), (c) => c.notNull())
        .addColumn('mtime', key(ctx, 64), (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
  {
    version: 17,
    name: 'tasks.creator_passwords: the folder passwords a task\'s creator presented, to decide each name the task writes',
    async up(ctx) {
      await ctx.db.schema.alterTable('tasks').addColumn('creator_passwords', text(ctx)).execute();
    },
  },
  {
    version: 19,
    name: 'state_versions: one counter per kind of cached state, bumped on every change (cluster staleness bound)',
    async up(ctx) {
      await table(ctx, 'state_versions', false)
        .addColumn('kind', key(ctx, 32), (c) => c.primaryKey())
        .addColumn('version', 'bigint', (c) => c.notNull().defaultTo(0))
        .execute();
      const have = new Set((await ctx.db.selectFrom('state_versions').select('kind').execute()).map((r) => String(r.kind)));
      for (const kind of ['metas', 'settings', 'storages', 'auth']) {
        if (!have.has(kind)) await ctx.db.insertInto('state_versions').values({ kind, version: 0 }).execute();
      }
    },
  },
  {
    version: 20,
    name: 'dav_locks: WebDAV locks every process sees, surviving a restart',
    async up(ctx) {
      await table(ctx, 'dav_locks', false)
        .addColumn('token', key(ctx, 80), (c) => c.primaryKey())
        .addColumn('root', text(ctx), (c) => c.notNull())
        .addColumn('depth', key(ctx, 16), (c) => c.notNull())
        .addColumn('scope', key(ctx, 16), (c) => c.notNull())
        .addColumn('owner', text(ctx), (c) => c.notNull())
        .addColumn('timeout', 'bigint', (c) => c.notNull())
        .addColumn('expires', 'bigint', (c) => c.notNull())
        .addColumn('user_id', 'integer', (c) => c.notNull())
        .execute();
      await index(ctx, 'dav_locks', 'dav_locks_expires', ['expires']);
    },
  },
  {
    version: 21,
    name: 'state_versions: a counter for the event hooks (each process matches events against its copy)',
    async up(ctx) {
      const have = await ctx.db.selectFrom('state_versions').select('kind').where('kind', '=', 'hooks').executeTakeFirst();
      if (!have) await ctx.db.insertInto('state_versions').values({ kind: 'hooks', version: 0 }).execute();
    },
  },
  {
    version: 22,
    name: 'login_failures: the login throttle\'s counters in the database, used by a cluster while Redis is unreachable',
    async up(ctx) {
      await table(ctx, 'login_failures', false)
        .addColumn('ip', key(ctx, 64), (c) => c.primaryKey())
        .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('expires', 'bigint', (c) => c.notNull())
        .execute();
      await index(ctx, 'login_failures', 'login_failures_expires', ['expires']);
    },
  },
  {
    version: 23,
    name: 'wopi_files: the stable id WOPI gives each file opened in an online office, by virtual path',
    async up(ctx) {
      await table(ctx, 'wopi_files', false)
        .addColumn('id', key(ctx, 64), (c) => c.primaryKey())
        .addColumn('path', text(ctx), (c) => c.notNull())
        .addColumn('path_hash', key(ctx, 64), (c) => c.notNull())
        .addColumn('owner_id', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created', 'bigint', (c) => c.notNull())
        .execute();
      await index(ctx, 'wopi_files', 'wopi_files_path_hash', ['path_hash'], true);
    },
  },
  {
    version: 25,
    name: 'trash: storages.trash and trash_days, and trash_entries (what each storage\'s trash holds)',
    async up(ctx) {
      await ctx.db.schema.alterTable('storages').addColumn('trash', key(ctx, 16), (c) => c.notNull().defaultTo('')).execute();
      await ctx.db.schema.alterTable('storages').addColumn('trash_days', 'integer', (c) => c.notNull().defaultTo(30)).execute();
      await table(ctx, 'trash_entries', false)
        .addColumn('id', key(ctx, 40), (c) => c.primaryKey())
        .addColumn('storage_id', 'integer', (c) => c.notNull())
        .addColumn('path', text(ctx), (c) => c.notNull())
        .addColumn('name', text(ctx), (c) => c.notNull())
        .addColumn('size', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('is_dir', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('deleted_at', 'bigint', (c) => c.notNull())
        .addColumn('user_id', 'integer', (c) => c.notNull())
        .addColumn('username', key(ctx), (c) => c.notNull().defaultTo(''))
        .addColumn('front', key(ctx, 16), (c) => c.notNull().defaultTo(''))
        .execute();
      await index(ctx, 'trash_entries', 'trash_entries_storage', ['storage_id', 'deleted_at']);
      await index(ctx, 'trash_entries', 'trash_entries_user', ['user_id']);
    },
  },
  {
    version: 26,
    name: 'groups: access_groups (bits and roots), group_members, users.roots (several roots per user)',
    async up(ctx) {
      await table(ctx, 'access_groups', true)
        .addColumn('name', key(ctx), (c) => c.notNull())
        .addColumn('permission', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('roots', text(ctx), (c) => c.notNull())
        .execute();
      await index(ctx, 'access_groups', 'access_groups_name', ['name'], true);
      await table(ctx, 'group_members', false)
        .addColumn('user_id', 'integer', (c) => c.notNull())
        .addColumn('group_id', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint(`${ctx.prefix}group_members_pk`, ['user_id', 'group_id'])
        .execute();
      await index(ctx, 'group_members', 'group_members_group', ['group_id']);
      // MySQL gives a TEXT column no default: there it may be null, read as no roots.
      await ctx.db.schema.alterTable('users').addColumn('roots', text(ctx), (c) => (ctx.type === 'mysql' ? c : c.notNull().defaultTo('[]'))).execute();
    },
  },
  {
    version: 27,
    name: 'quotas: quota_bytes and quota_files of users and groups, quota_usage (what each owner uses)',
    async up(ctx) {
      for (const t of ['users', 'access_groups']) {
        await ctx.db.schema.alterTable(t).addColumn('quota_bytes', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
        await ctx.db.schema.alterTable(t).addColumn('quota_files', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
      }
      await table(ctx, 'quota_usage', false)
        .addColumn('owner_kind', key(ctx, 16), (c) => c.notNull())
        .addColumn('owner_id', 'integer', (c) => c.notNull())
        .addColumn('used_bytes', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('used_files', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('scanned_at', 'bigint', (c) => c.notNull().defaultTo(0))
        .addPrimaryKeyConstraint(`${ctx.prefix}quota_usage_pk`, ['owner_kind', 'owner_id'])
        .execute();
    },
  },
  {
    version: 30,
    name: 'sync jobs: sync_jobs (with the schedule\'s next fire and the run lease), sync_runs (the reports), sync_state (what the last runs left in step)',
    async up(ctx) {
      await table(ctx, 'sync_jobs', true)
        .addColumn('name', key(ctx), (c) => c.notNull())
        .addColumn('src', text(ctx), (c) => c.notNull())
        .addColumn('dst', text(ctx), (c) => c.notNull())
        .addColumn('mode', key(ctx, 16), (c) => c.notNull())
        .addColumn('compare', key(ctx, 16), (c) => c.notNull())
        .addColumn('filters', text(ctx), (c) => c.notNull())
        .addColumn('cron', key(ctx, 128), (c) => c.notNull().defaultTo(''))
        .addColumn('time_zone', key(ctx, 64), (c) => c.notNull().defaultTo('UTC'))
        .addColumn('options', text(ctx), (c) => c.notNull())
        .addColumn('disabled', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('owner_id', 'integer', (c) => c.notNull())
        .addColumn('owner', key(ctx), (c) => c.notNull().defaultTo(''))
        .addColumn('next_run', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('lease_owner', key(ctx, 64), (c) => c.notNull().defaultTo(''))
        .addColumn('lease_until', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await index(ctx, 'sync_jobs', 'sync_jobs_name', ['name'], true);
      await index(ctx, 'sync_jobs', 'sync_jobs_next_run', ['next_run']);
      await table(ctx, 'sync_runs', true)
        .addColumn('job_id', 'integer', (c) => c.notNull())
        .addColumn('task_id', key(ctx, 64), (c) => c.notNull().defaultTo(''))
        .addColumn('dry_run', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('state', key(ctx, 16), (c) => c.notNull())
        .addColumn('started_at', 'bigint', (c) => c.notNull())
        .addColumn('finished_at', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('report', text(ctx), (c) => c.notNull())
        .addColumn('error', text(ctx), (c) => c.notNull())
        .execute();
      await index(ctx, 'sync_runs', 'sync_runs_job', ['job_id', 'id']);
      await table(ctx, 'sync_state', false)
        .addColumn('job_id', 'integer', (c) => c.notNull())
        .addColumn('path_hash', key(ctx, 64), (c) => c.notNull())
        .addColumn('path', text(ctx), (c) => c.notNull())
        .addColumn('src_size', 'bigint', (c) => c.notNull())
        .addColumn('src_mtime', 'bigint', (c) => c.notNull())
        .addColumn('dst_size', 'bigint', (c) => c.notNull())
        .addColumn('dst_mtime', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint(`${ctx.prefix}sync_state_pk`, ['job_id', 'path_hash'])
        .execute();
    },
  },
  {
    version: 31,
    name: 'per-account limits: upload_rate, download_rate (bytes/s), max_transfers, max_sessions of users and groups',
    async up(ctx) {
      for (const t of ['users', 'access_groups']) {
        for (const c of ['upload_rate', 'download_rate', 'max_transfers', 'max_sessions']) {
          await ctx.db.schema.alterTable(t).addColumn(c, 'bigint', (col) => col.notNull().defaultTo(0)).execute();
        }
      }
    },
  },
  {
    version: 32,
    name: 'group path rules: meta.group_id (0: everyone), unique by path and group',
    async up(ctx) {
      await ctx.db.schema.alterTable('meta').addColumn('group_id', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      const old = `${ctx.prefix}meta_path`;
      if (ctx.type === 'mysql') await ctx.db.schema.dropIndex(old).on('meta').execute();
      else await ctx.db.schema.dropIndex(old).ifExists().execute();
      await index(ctx, 'meta', 'meta_path_group', ['path', 'group_id'], true);
    },
  },
];

/**
 * The search index. Paths compare byte-wise on every engine (COLLATE "C" on PostgreSQL, the
 * binary collation on MySQL) so a subtree is the index range `parent >= 'P/' AND parent < 'P0'`.
 * Name matching is a case-insensitive substring test, accelerated by a trigram index where the
 * engine has one: an FTS5 `trigram` table kept in step by triggers on SQLite, `pg_trgm` GIN on
 * PostgreSQL (when the extension can be created). MySQL/MariaDB scan (MariaDB has no n-gram parser).
 */
async function createSearchTables(ctx: MigrationContext): Promise<void> {
  const pathType = ctx.type === 'mysql' ? sql.raw('varchar(4096)') : ctx.type === 'postgres' ? sql.raw('text collate "C"') : sql.raw('text');
  const nameType = ctx.type === 'mysql' ? sql.raw('varchar(1024)') : ctx.type === 'postgres' ? sql.raw('text collate "C"') : sql.raw('text');
  await table(ctx, 'search_nodes', true)
    .addColumn('parent', pathType, (c) => c.notNull())
    .addColumn('name', nameType, (c) => c.notNull())
    .addColumn('is_dir', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('size', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('modified', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  if (ctx.type === 'sqlite3') {
    const fts = sql.raw(`${ctx.prefix}search_fts`);
    await sql`create virtual table if not exists ${fts} using fts5(name, content=${sql.lit(`${ctx.prefix}search_nodes`)}, content_rowid='id', tokenize='trigram', detail='none')`.execute(ctx.db);
  }
  // Two processes creating the extension at once may race; the index is tried either way.
  if (ctx.type === 'postgres') await sql`create extension if not exists pg_trgm`.execute(ctx.db).catch(() => undefined);
  await createSearchIndexes(ctx.db, ctx.type, ctx.prefix);
  await table(ctx, 'search_state', false)
    .addColumn('key', key(ctx, 64), (c) => c.primaryKey())
    .addColumn('value', text(ctx), (c) => c.notNull())
    .execute();
}

/**
 * Applies the migrations not yet recorded in `schema_migrations`, holding a database-wide
 * lock so that several processes starting together on one database migrate it once.
 */
export async function migrate(handle: DbHandle): Promise<number[]> {
  const applied: number[] = [];
  await handle.db.connection().execute(async (conn) => {
    const ctx: MigrationContext = { db: conn as AnyDb, type: handle.type, prefix: handle.prefix };
    const lockName = `atrium_migrate_${handle.prefix}`;
    if (handle.type === 'postgres') await sql`select pg_advisory_lock(${lockId(handle.prefix)})`.execute(conn);
    if (handle.type === 'mysql') await sql`select get_lock(${lockName}, 120)`.execute(conn);
    try {
      await table(ctx, 'schema_migrations', false)
        .addColumn('version', 'integer', (c) => c.primaryKey())
        .addColumn('name', key(ctx), (c) => c.notNull())
        .addColumn('applied_at', 'bigint', (c) => c.notNull())
        .execute();
      const done = new Set(
        (await conn.selectFrom('schema_migrations').select('version').execute()).map((r) => Number(r.version)),
      );
      for (const m of MIGRATIONS) {
        if (done.has(m.version)) continue;
        await m.up(ctx);
        await conn.insertInto('schema_migrations').values({ version: m.version, name: m.name, applied_at: Date.now() }).execute();
        applied.push(m.version);
      }
    } finally {
      if (handle.type === 'postgres') await sql`select pg_advisory_unlock(${lockId(handle.prefix)})`.execute(conn);
      if (handle.type === 'mysql') await sql`select release_lock(${lockName})`.execute(conn);
    }
  });
  return applied;
}

/** Drops every table of this prefix (tests use a prefix of their own on shared servers). */
export async function dropAll(handle: DbHandle): Promise<void> {
  for (const name of ['users', 'sessions', 'setting_items', 'storages', 'meta', 'ssh_public_keys', 's3_keys', 'app_passwords', 'webauthn_credentials', 'webauthn_challenges', 'tasks', 'uploads', 'upload_parts', 'upload_claims', 'schema_migrations', 'shares', 'sso_flows', 'audit_events', 'hooks', 'hook_deliveries', 'object_tags', 'object_digests', 'state_versions', 'dav_locks', 'login_failures', 'trash_entries', 'wopi_files', 'access_groups', 'group_members', 'quota_usage', 'sync_jobs', 'sync_runs', 'sync_state']) {
    await handle.db.schema.dropTable(name).ifExists().execute();
  }
  for (const name of ['search_fts', 'search_nodes', 'search_state']) await handle.db.schema.dropTable(name).ifExists().execute();
}
