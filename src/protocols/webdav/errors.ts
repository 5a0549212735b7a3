import { ObjectNotFound, UploadIntegrityError } from '../../drivers/types.js';
import { AppError } from '../../errors.js';
import { MSG_DELETE_ROOT } from '../../fs/write.js';
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

/** The one mapping of typed errors to WebDAV statuses. */
export function toDavError(err: unknown): DavError {
  if (err instanceof DavError) return err;
  if (err instanceof XmlError || err instanceof IfHeaderError) return new DavError(400, err.message);
  if (err instanceof ObjectNotFound) return new DavError(404, err.message);
  if (err instanceof UploadIntegrityError) return new DavError(400, err.message);
  if (err instanceof AppError) {
    if (/not found/i.test(err.message)) return new DavError(404, err.message);
    if (err.code === 401) return new DavError(401, err.message);
    if (err.code === 403) return new DavError(/exists/.test(err.message) ? 412 : 403, err.message);
    if (err.code === 400 || err.code === 429) return new DavError(err.code, err.message);
    if (err.message === MSG_DELETE_ROOT) return new DavError(403, err.message);
    // A name taken by something the caller can't see (e.g. a link out of the storage): as MKCOL on an existing resource.
    if (err.message === 'file exists') return new DavError(405, err.message);
    if (err.message === 'not implement' || err.message === 'upload not supported') return new DavError(501, err.message);
    if (/^storage not init/.test(err.message)) return new DavError(503, err.message);
    return new DavError(500, err.message);
  }
  // Unexpected failures are logged by the error handler; their text (paths, stacks) stays there.
  return new DavError(500, 'internal error');
}
