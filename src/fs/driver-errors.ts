import { type Driver } from '../drivers/types.js';
import { AppError, type ErrorKind, isAbort } from '../errors.js';

/** Driver operations whose failures count as driver errors (the capabilities of drivers/types.ts). */
const OPS = new Set(['list', 'get', 'link', 'getLink', 'listStamp', 'other', 'makeDir', 'rename', 'move', 'copy', 'remove', 'put']);

/**
 * The kinds that are a failure of the storage behind a driver (its own refusals that the request
 * could not foresee: a permission of its file system, no space left, a name it holds twice), as
 * opposed to answers about the request (a missing file, a bad name, a password).
 */
const FAULT: Record<ErrorKind, boolean> = {
  BadRequest: false,
  Unauthorized: false,
  OtpRequired: false,
  Forbidden: false,
  PasswordRequired: false,
  Hidden: false,
  NotFound: false,
  Exists: false,
  NotEmpty: false,
  Conflict: false,
  Integrity: false,
  PathTooLong: false,
  TooManyRequests: false,
  TooLarge: false,
  QuotaExceeded: false,
  Unsupported: true,
  Upstream: true,
  Unavailable: true,
  Internal: true,
};

/** Failures of the storage behind a driver, as opposed to answers about the request (missing file, bad name) and cancellation. */
export function isDriverFault(err: unknown): boolean {
  if (isAbort(err)) return false;
  return err instanceof AppError ? FAULT[err.kind] : true;
}

/**
 * The driver seen through a proxy that reports every failed operation to `onError` (for the
 * driver-error metric) and rethrows it unchanged. Missing capabilities stay missing.
 */
export function watchDriverErrors(driver: Driver, onError: (op: string, err: unknown) => void): Driver {
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(driver, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      let fn = wrapped.get(prop);
      if (!fn) {
        const op = String(prop);
        fn = OPS.has(op)
          ? async (...args: unknown[]) => {
              try {
                return await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
              } catch (err) {
                if (isDriverFault(err)) onError(op, err);
                throw err;
              }
            }
          : (value as (...a: unknown[]) => unknown).bind(target);
        wrapped.set(prop, fn);
      }
      return fn;
    },
  });
}
