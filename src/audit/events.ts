import type { ErrorKind } from '../errors.js';

/** The front an operation came through (the audit log's `front`). */
export type EventFront = 'api' | 'raw' | 'share' | 'webdav' | 'sftp' | 'ftp' | 's3' | 'wopi' | 'task' | 'cli';

/**
 * The operations the view (and the account and admin services) report. The audit log stores
 * them and hooks match on them by these names.
 */
export const EVENT_OPS = [
  // sign-in, on every front (result `ok` or the error kind)
  'login',
  // reads
  'list',
  'download',
  // writes
  'upload',
  // an upload URL of the storage itself handed to the client (the bytes bypass this server)
  'direct_upload',
  'mkdir',
  'rename',
  'move',
  'copy',
  'remove',
  'extract',
  'offline_download',
  // shares
  'share_create',
  'share_update',
  'share_delete',
  'share_visit',
  // admin changes
  'user_create',
  'user_update',
  'user_delete',
  'group_create',
  'group_update',
  'group_delete',
  'storage_create',
  'storage_update',
  'storage_delete',
  'meta_create',
  'meta_update',
  'meta_delete',
  'setting_update',
  'key_create',
  'key_delete',
  'hook_create',
  'hook_update',
  'hook_delete',
  // a session ended by its user or an admin (GET /api/me/sessions)
  'session_end',
  // the installation exported or restored on the manage page (path: the file's name)
  'backup_export',
  'backup_import',
] as const;

export type EventOp = (typeof EVENT_OPS)[number];

/** One operation as it happened: who, through which front, what, on which path, and how it ended. */
export interface OpEvent {
  /** Milliseconds since the epoch. */
  time: number;
  /** The user's name ('' when nobody signed in: a failed login of an unknown name keeps the name tried). */
  user: string;
  front: EventFront;
  op: EventOp;
  /** The virtual path (for admin changes: the object's name or id). */
  path: string;
  dst_path?: string;
  /** Bytes moved (downloads, uploads, copies); 0 otherwise. */
  bytes?: number;
  /** `ok`, or the error kind the operation ended with. */
  result: 'ok' | ErrorKind;
  ip?: string;
  /** The request's id, or `task:<id>` for a task's operations. */
  request_id?: string;
}

/** Who is acting and from where: what a front passes to the view so that its events say so. */
export interface EventOrigin {
  front: EventFront;
  ip?: string;
  requestId?: string;
}

export type EventListener = (e: OpEvent) => void;

/**
 * The process's stream of operation events. Emitting never waits and never throws: consumers
 * (the audit log, hooks) queue what they need and do their work off the request path.
 */
export class OpEvents {
  private readonly listeners: EventListener[] = [];

  on(listener: EventListener): void {
    this.listeners.push(listener);
  }

  emit(e: OpEvent): void {
    for (const l of this.listeners) {
      try {
        l(e);
      } catch {
        // a consumer's fault never reaches the operation that emitted
      }
    }
  }
}
