// Typed errors: every layer throws a kind; each front maps kinds to its own answer in one table
// (server/envelope.ts for the API, protocols/webdav/errors.ts, protocols/sftp/status.ts,
// protocols/ftp/replies.ts). No front reads a message's text to learn what went wrong.

/**
 * What went wrong, whatever the wording:
 * - `Hidden`: a read of a path a hide rule keeps from this principal (answers as missing or as
 *   "no access", per front); `PasswordRequired`: a folder password is missing or wrong.
 * - `PathTooLong`: a path over the limits of view/paths.ts.
 * - `Conflict`: another client changed the same thing first (a resumable upload's offset or state).
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
  | 'Unsupported'
  | 'TooLarge'
  | 'PathTooLong'
  | 'TooManyRequests'
  | 'Upstream'
  | 'Unavailable'
  | 'Internal';

/** The API envelope's code of each kind, unless an error names the original's own code. */
const API_CODE: Record<ErrorKind, number> = {
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
  Unsupported: 500,
  TooLarge: 400,
  PathTooLong: 400,
  TooManyRequests: 429,
  Upstream: 500,
  Unavailable: 500,
  Internal: 500,
};

const KIND_OF_CODE: Record<number, ErrorKind> = { 400: 'BadRequest', 401: 'Unauthorized', 402: 'OtpRequired', 403: 'Forbidden', 404: 'NotFound', 429: 'TooManyRequests' };

export class AppError extends Error {
  /** The code placed in the API envelope's `code` field (the original's code for this answer). */
  readonly code: number;
  /** Optional `data` carried with the error (storage create returns `{id}` on failure). */
  readonly data: unknown;
  readonly kind: ErrorKind;
  constructor(code: number, message: string, data: unknown = null, kind?: ErrorKind) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    this.data = data;
    this.kind = kind ?? KIND_OF_CODE[code] ?? 'Internal';
  }
}

/** An error of a kind; `apiCode` when the original answers this case with another envelope code. */
export class KindError extends AppError {
  constructor(kind: ErrorKind, message: string, apiCode = API_CODE[kind], data: unknown = null) {
    super(apiCode, message, data, kind);
  }
}

export const isKind = (err: unknown, ...kinds: ErrorKind[]): boolean => err instanceof AppError && kinds.includes(err.kind);

export class BadRequest extends AppError {
  constructor(message: string, data: unknown = null) {
    super(400, message, data);
  }
}

export class Unauthorized extends AppError {
  constructor(message: string) {
    super(401, message);
  }
}

export class OtpRequired extends AppError {
  constructor(message = 'Invalid 2FA code') {
    super(402, message);
  }
}

export class Forbidden extends AppError {
  constructor(message = 'permission denied', apiCode = 403) {
    super(apiCode, message, null, 'Forbidden');
  }
}

export class NotFound extends AppError {
  constructor(message: string) {
    super(404, message);
  }
}

/** A missing file or folder: the original answers 500 with its text (`object not found`). */
export class Missing extends KindError {
  constructor(message = 'object not found') {
    super('NotFound', message, 500);
  }
}

/** A name already taken (`file [x] exists`, 403 on the API; 500 where the original says so). */
export class Exists extends KindError {
  constructor(message = 'file exists', apiCode = 403) {
    super('Exists', message, apiCode);
  }
}

export class NotEmpty extends KindError {
  constructor(message = 'folder is not empty') {
    super('NotEmpty', message);
  }
}

/** The storage or driver can not do this (`not implement`, `upload not supported`). */
/** Another request changed the object first (an upload's offset moved, or it is being completed). */
export class Conflict extends KindError {
  constructor(message: string) {
    super('Conflict', message);
  }
}

export class Unsupported extends KindError {
  constructor(message = 'not implement') {
    super('Unsupported', message);
  }
}

/** A storage that is not working (`storage not init: …`). */
export class Unavailable extends KindError {
  constructor(message: string) {
    super('Unavailable', message);
  }
}

/** The storage behind a driver failed (its own text, 500 on the API). */
export class Upstream extends KindError {
  constructor(message: string) {
    super('Upstream', message);
  }
}

export class TooLarge extends KindError {
  constructor(message: string, apiCode = 400) {
    super('TooLarge', message, apiCode);
  }
}

export class TooManyRequests extends AppError {
  constructor(message: string) {
    super(429, message);
  }
}

/** A failure the original reports with code 500 and its own text. */
export class ServerError extends AppError {
  constructor(message: string, data: unknown = null) {
    super(500, message, data);
  }
}

/** Raised while reading config.json or the environment; the CLI prints it and exits non-zero. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}
