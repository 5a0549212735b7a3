import type { ErrorKind, EventFront, EventOp } from '../../src/server/wire-types';

/**
 * The audit log's operations, fronts and results as the audit and hooks pages offer them. Each
 * list names every value of the server's type: a new operation, front or error kind left out
 * here breaks `npm run typecheck:web`.
 */
const every =
  <T extends string>() =>
  <L extends readonly T[]>(list: L & ([T] extends [L[number]] ? unknown : { missing: Exclude<T, L[number]> })) =>
    list;

export const OPS = every<EventOp>()([
  'login', 'list', 'download', 'upload', 'direct_upload', 'mkdir', 'rename', 'move', 'copy', 'remove', 'extract', 'offline_download',
  'share_create', 'share_update', 'share_delete', 'share_visit', 'user_create', 'user_update', 'user_delete',
  'group_create', 'group_update', 'group_delete',
  'storage_create', 'storage_update', 'storage_delete', 'meta_create', 'meta_update', 'meta_delete', 'setting_update',
  'key_create', 'key_delete', 'hook_create', 'hook_update', 'hook_delete', 'session_end',
  'backup_export', 'backup_import',
] as const);

export const FRONTS = every<EventFront>()(['api', 'raw', 'share', 'webdav', 'sftp', 'ftp', 's3', 'wopi', 'task', 'cli'] as const);

export const RESULTS = ['ok', ...every<ErrorKind>()([
  'Forbidden', 'PasswordRequired', 'Hidden', 'NotFound', 'Exists', 'BadRequest', 'Unauthorized', 'OtpRequired', 'NotEmpty', 'Conflict',
  'Integrity', 'Unsupported', 'TooLarge', 'QuotaExceeded', 'PathTooLong', 'TooManyRequests', 'Upstream', 'Unavailable', 'Internal',
] as const)];
