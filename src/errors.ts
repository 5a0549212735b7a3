// Typed errors: every layer throws a kind; each front maps kinds to its own answer in one table:
// the API envelope (API_CODE below; the cases OpenList answers otherwise: server/api-codes.ts),
// raw links (server/raw-error.ts), tus (server/routes/tus.ts), WebDAV (protocols/webdav/errors.ts),
// SFTP (protocols/sftp/status.ts), FTP (protocols/ftp/replies.ts), S3 (protocols/s3/errors.ts)
// and the command line (cli/index.ts). No front reads a message's text to learn what went wrong,
// and no throw site chooses a front's code. `Internal` (or an error that is no AppError) is a bug
// or an unforeseen failure: every front answers it with a fixed text and logs it with its stack.

/**
 * What went wrong, whatever the wording:
 * - `Hidden`: a read of a path a hide rule keeps from this principal (answers as missing or as
 *   "no access", per front); `PasswordRequired`: a folder password is missing or wrong.
 * - `PathTooLong`: a path over the limits of view/paths.ts.
 * - `Conflict`: another client changed the same thing first (a resumable upload's offset or state).
 * - `Integrity`: the bytes stored differ from what the client declared (size or hash).
 * - `QuotaExceeded`: a write would take a user's or group's usage past its quota (bytes or files).
 * - `Upstream`: the storage behind a driver failed; `Unavailable`: a storage or service is not working.
 */
export type ErrorKind =
  | 'BadRequest'
  | 'Unauthorized'
  | 'OtpRequired'
  | 'Forbidden'
  | 'PasswordRequired'
  | 'Hidden'
  | 'NotFound'
  | 'Exists'
  | 'NotEmpty'
  | 'Conflict'
  | 'Integrity'
  | 'Unsupported'
  | 'TooLarge'
  | 'QuotaExceeded'
  | 'PathTooLong'
  | 'TooManyRequests'
  | 'Upstream'
  | 'Unavailable'
  | 'Internal';

export const ERROR_KINDS: readonly ErrorKind[] = [
  'BadRequest', 'Unauthorized', 'OtpRequired', 'Forbidden', 'PasswordRequired', 'Hidden', 'NotFound', 'Exists', 'NotEmpty',
  'Conflict', 'Integrity', 'Unsupported', 'TooLarge', 'QuotaExceeded', 'PathTooLong', 'TooManyRequests', 'Upstream', 'Unavailable', 'Internal',
];

/** The API envelope's code of each kind, unless the route answering declares another (ApiCodes). */
export const API_CODE: Record<ErrorKind, number> = {
  BadRequest: 400,
  Unauthorized: 401,
  OtpRequired: 402,
  Forbidden: 403,
  PasswordRequired: 403,
  Hidden: 403,
  NotFound: 404,
  Exists: 403,
  NotEmpty: 400,
  Conflict: 409,
  Integrity: 400,
  Unsupported: 500,
  TooLarge: 400,
  QuotaExceeded: 403,
  PathTooLong: 400,
  TooManyRequests: 429,
  Upstream: 500,
  Unavailable: 500,
  Internal: 500,
};

export class AppError extends Error {
  readonly kind: ErrorKind;
  /** Optional `data` carried with the error (storage create returns `{id}` on failure). */
  readonly data: unknown;
  constructor(kind: ErrorKind, message: string, data: unknown = null) {
    super(message);
    this.name = new.target.name;
    this.kind = kind;
    this.data = data;
  }
}

/** An error of a kind (with `data` for the API envelope, where the original carries some). */
export class KindError extends AppError {
  constructor(kind: ErrorKind, message: string, data: Record<string, unknown> | null = null) {
    super(kind, message, data);
  }
}

type ErrorClass = abstract new (...args: never[]) => AppError;

/**
 * Where OpenList's wire answers a case with another envelope code than its kind's, the route
 * declares it next to itself (route option `config.apiCodes`): a rule names a kind, or an error
 * class for one case of a kind the route answers both ways; the first rule that matches wins.
 */
export type ApiCodes = readonly (readonly [ErrorKind | ErrorClass, number])[];

/** The API envelope code of an error answered by a route with `rules`. */
export function apiCodeOf(err: AppError, rules: ApiCodes = []): number {
  for (const [match, code] of rules) {
    if (typeof match === 'string' ? err.kind === match : err instanceof match) return code;
  }
  return API_CODE[err.kind];
}

/** An error whose text may reach a client: an AppError of a kind other than Internal. */
export const isExpected = (err: unknown): err is AppError => err instanceof AppError && err.kind !== 'Internal';

export const isKind = (err: unknown, ...kinds: ErrorKind[]): boolean => err instanceof AppError && kinds.includes(err.kind);

/**
 * Cancellation: a task canceled, a client gone, a transfer aborted. Recognised by its name, as
 * the platform's own (`DOMException` and Node's AbortError share the name `AbortError`); it is
 * no AppError: no front answers it, the one who canceled is not waiting.
 */
export class AbortError extends Error {
  readonly code = 'ABORT_ERR';
  constructor(message = 'The operation was aborted', options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AbortError';
  }
}

export const isAbort = (err: unknown): boolean => err instanceof Error && err.name === 'AbortError';

export class BadRequest extends KindError {
  constructor(message: string, data: Record<string, unknown> | null = null) {
    super('BadRequest', message, data);
  }
}

export class Unauthorized extends KindError {
  constructor(message: string) {
    super('Unauthorized', message);
  }
}

export class OtpRequired extends KindError {
  constructor(message = 'Invalid 2FA code') {
    super('OtpRequired', message);
  }
}

export class Forbidden extends KindError {
  constructor(message = 'permission denied') {
    super('Forbidden', message);
  }
}

/** A missing record (a user, storage, meta, task…): 404 on the API. */
export class NotFound extends KindError {
  constructor(message: string) {
    super('NotFound', message);
  }
}

/**
 * A missing file or folder (`object not found`): kind NotFound. OpenList answers it 500 with its
 * text on the routes that read the tree; they declare so (server/api-codes.ts, FS_CODES).
 */
export class Missing extends KindError {
  constructor(message = 'object not found') {
    super('NotFound', message);
  }
}

/** A name already taken (`file [x] exists`). */
export class Exists extends KindError {
  constructor(message = 'file exists', data: Record<string, unknown> | null = null) {
    super('Exists', message, data);
  }
}

export class NotEmpty extends KindError {
  constructor(message = 'folder is not empty') {
    super('NotEmpty', message);
  }
}

/** Another request changed the object first (an upload's offset moved, or it is being completed). */
export class Conflict extends KindError {
  constructor(message: string) {
    super('Conflict', message);
  }
}

/** The storage or driver can not do this (`not implement`, `upload not supported`). */
export class Unsupported extends KindError {
  constructor(message = 'not implement') {
    super('Unsupported', message);
  }
}

/** A storage or service that is not working (`storage not init: …`). */
export class Unavailable extends KindError {
  constructor(message: string, data: Record<string, unknown> | null = null) {
    super('Unavailable', message, data);
  }
}

/** The storage behind a driver failed (its own text, 500 on the API). */
export class Upstream extends KindError {
  constructor(message: string) {
    super('Upstream', message);
  }
}

export class TooLarge extends KindError {
  constructor(message: string) {
    super('TooLarge', message);
  }
}

/** A write past a quota: the API's `403 quota exceeded`, WebDAV 507, SFTP failure, FTP 552, S3 403 QuotaExceeded. */
export class QuotaExceeded extends KindError {
  constructor(message = 'quota exceeded') {
    super('QuotaExceeded', message);
  }
}

export class TooManyRequests extends KindError {
  constructor(message: string) {
    super('TooManyRequests', message);
  }
}

/** Raised while reading config.json or the environment; the CLI prints it and exits non-zero. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}
