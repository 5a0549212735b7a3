import { type ErrorKind, isExpected } from '../../errors.js';
import { IfHeaderError } from './if-header.js';
import { XmlError } from './xml.js';

/** A WebDAV answer other than success: a status with a short text body. */
export class DavError extends Error {
  constructor(
    readonly status: number,
    message = '',
    readonly headers: Record<string, string> = {},
    /** A `<D:error>` precondition element (RFC 4918 §16) sent as the XML body instead of the text. */
    readonly condition?: string,
  ) {
    super(message);
  }
}

export const MSG_DAV_INTERNAL = 'internal error';

/** The one mapping of error kinds to WebDAV statuses. */
const STATUS_OF: Record<ErrorKind, number> = {
  BadRequest: 400,
  Unauthorized: 401,
  OtpRequired: 401,
  Forbidden: 403,
  PasswordRequired: 403,
  // A hidden path is answered as if it did not exist.
  Hidden: 404,
  NotFound: 404,
  // RFC 4918 §9.8.5/§9.9.4: a destination that exists and may not be overwritten.
  Exists: 412,
  NotEmpty: 409,
  Conflict: 409,
  Integrity: 400,
  Unsupported: 501,
  TooLarge: 507,
  QuotaExceeded: 507,
  PathTooLong: 414,
  TooManyRequests: 429,
  Upstream: 502,
  Unavailable: 503,
  Internal: 500,
};

export function toDavError(err: unknown): DavError {
  if (err instanceof DavError) return err;
  if (err instanceof XmlError || err instanceof IfHeaderError) return new DavError(400, err.message);
  if (isExpected(err)) return new DavError(STATUS_OF[err.kind], err.message);
  // Unexpected failures (kind Internal or no AppError) are logged by the error handler; their text (paths, stacks) stays there.
  return new DavError(500, MSG_DAV_INTERNAL);
}
