import { type ErrorKind, isExpected } from '../../errors.js';

/** An S3 error answer: HTTP status and the S3 error code of the XML body. */
export class S3Error extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export const noSuchBucket = (name: string) => new S3Error(404, 'NoSuchBucket', `The specified bucket does not exist: ${name}`);
export const noSuchKey = () => new S3Error(404, 'NoSuchKey', 'The specified key does not exist.');
export const accessDenied = (message = 'Access Denied') => new S3Error(403, 'AccessDenied', message);
export const signatureMismatch = (message = 'The request signature we calculated does not match the signature you provided.') =>
  new S3Error(403, 'SignatureDoesNotMatch', message);

export const MSG_S3_INTERNAL = 'We encountered an internal error. Please try again.';

/** The one mapping of error kinds to S3 answers. */
const S3_OF: Record<ErrorKind, [number, string]> = {
  BadRequest: [400, 'InvalidRequest'],
  Unauthorized: [403, 'AccessDenied'],
  OtpRequired: [403, 'AccessDenied'],
  Forbidden: [403, 'AccessDenied'],
  PasswordRequired: [403, 'AccessDenied'],
  // A hidden key is answered as if it did not exist.
  Hidden: [404, 'NoSuchKey'],
  NotFound: [404, 'NoSuchKey'],
  // A folder (or file) in the way of the key: S3 has no such case, the nearest is a conflict.
  Exists: [409, 'OperationAborted'],
  NotEmpty: [409, 'OperationAborted'],
  // Another client changed the same thing first.
  Conflict: [409, 'OperationAborted'],
  // The body differs from its declared size or digest.
  Integrity: [400, 'BadDigest'],
  Unsupported: [501, 'NotImplemented'],
  TooLarge: [400, 'EntityTooLarge'],
  QuotaExceeded: [403, 'QuotaExceeded'],
  PathTooLong: [400, 'KeyTooLongError'],
  TooManyRequests: [503, 'SlowDown'],
  Upstream: [500, 'InternalError'],
  Unavailable: [503, 'ServiceUnavailable'],
  Internal: [500, 'InternalError'],
};

export function toS3Error(err: unknown): S3Error {
  if (err instanceof S3Error) return err;
  if (isExpected(err)) {
    const [status, code] = S3_OF[err.kind];
    return new S3Error(status, code, err.message);
  }
  // The HTTP layer's refusals of a request (a malformed header, a body over the limit) are the client's.
  const status = (err as { statusCode?: unknown } | null)?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500 && (err as { code?: unknown }).code?.toString().startsWith('FST_')) {
    return new S3Error(status === 413 ? 400 : status, status === 413 ? 'MaxMessageLengthExceeded' : 'InvalidRequest', (err as Error).message);
  }
  // Unexpected failures (kind Internal or no AppError) are logged by the error handler; their text stays there.
  return new S3Error(500, 'InternalError', MSG_S3_INTERNAL);
}
