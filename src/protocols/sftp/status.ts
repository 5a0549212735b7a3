// SFTP v3 answers of errors: the one table of error kinds to status codes. An unexpected error
// (kind Internal, or no AppError) answers a fixed text; its own text goes to the log only.

import { type ErrorKind, isExpected } from '../../errors.js';

/** SFTP v3 status codes (draft-ietf-secsh-filexfer-02). */
export const STATUS = { OK: 0, EOF: 1, NO_SUCH_FILE: 2, PERMISSION_DENIED: 3, FAILURE: 4, BAD_MESSAGE: 5, OP_UNSUPPORTED: 8 } as const;

/** A status a request answers itself (an invalid handle, a bad message). */
export class SftpStatus extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export const MSG_SFTP_INTERNAL = 'Failure';

/** The one mapping of error kinds to SFTP statuses; a failure (with its text) for the kinds SFTP v3 has no code of. */
const STATUS_OF: Record<ErrorKind, number> = {
  NotFound: STATUS.NO_SUCH_FILE,
  // A hidden path is answered as if it did not exist.
  Hidden: STATUS.NO_SUCH_FILE,
  Forbidden: STATUS.PERMISSION_DENIED,
  PasswordRequired: STATUS.PERMISSION_DENIED,
  Unauthorized: STATUS.PERMISSION_DENIED,
  OtpRequired: STATUS.PERMISSION_DENIED,
  Unsupported: STATUS.OP_UNSUPPORTED,
  BadRequest: STATUS.FAILURE,
  Exists: STATUS.FAILURE,
  NotEmpty: STATUS.FAILURE,
  Conflict: STATUS.FAILURE,
  Integrity: STATUS.FAILURE,
  TooLarge: STATUS.FAILURE,
  QuotaExceeded: STATUS.FAILURE,
  PathTooLong: STATUS.FAILURE,
  TooManyRequests: STATUS.FAILURE,
  Upstream: STATUS.FAILURE,
  Unavailable: STATUS.FAILURE,
  Internal: STATUS.FAILURE,
};

/** The status and text an error answers; `expected` false for an unexpected one (to be logged with its stack). */
export function statusOf(err: unknown): { code: number; message: string; expected: boolean } {
  if (err instanceof SftpStatus) return { code: err.code, message: err.message, expected: true };
  if (!isExpected(err)) return { code: STATUS.FAILURE, message: MSG_SFTP_INTERNAL, expected: false };
  const code = STATUS_OF[err.kind];
  if (code === STATUS.NO_SUCH_FILE) return { code, message: 'No such file', expected: true };
  return { code, message: err.message, expected: true };
}
