// FTP answers of errors: the one table of error kinds to reply codes. An unexpected error (kind
// Internal, or no AppError) answers a fixed text; its own text goes to the log only.

import { type ErrorKind, isExpected } from '../../errors.js';

export const MSG_FTP_INTERNAL = 'Local error in processing';

/** The one mapping of error kinds to FTP replies (RFC 959 §4.2). */
const REPLY_OF: Record<ErrorKind, number> = {
  NotFound: 550,
  // A hidden path is answered as if it did not exist.
  Hidden: 550,
  Forbidden: 550,
  PasswordRequired: 550,
  Unauthorized: 550,
  OtpRequired: 550,
  Exists: 550,
  NotEmpty: 550,
  BadRequest: 553,
  PathTooLong: 553,
  Unsupported: 502,
  TooLarge: 552,
  QuotaExceeded: 552,
  TooManyRequests: 421,
  Conflict: 451,
  Integrity: 451,
  Upstream: 451,
  Unavailable: 451,
  Internal: 451,
};

/** The reply of an error; `expected` false for an unexpected one (to be logged with its stack). */
export function replyOf(err: unknown): { code: number; text: string; expected: boolean } {
  if (!isExpected(err)) return { code: 451, text: MSG_FTP_INTERNAL, expected: false };
  if (err.kind === 'NotFound' || err.kind === 'Hidden') return { code: 550, text: 'No such file or folder', expected: true };
  return { code: REPLY_OF[err.kind], text: err.message, expected: true };
}
