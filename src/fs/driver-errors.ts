import { type Driver, ObjectNotFound } from '../drivers/types.js';
import { AppError } from '../errors.js';

/** Driver operations whose failures count as driver errors (the capabilities of drivers/types.ts). */
const OPS = new Set(['list', 'get', 'link', 'listStamp', 'other', 'makeDir', 'rename', 'move', 'copy', 'remove', 'put']);

/** Failures of the storage behind a driver, as opposed to answers about the request (missing file, bad name, canceled). */
export function isDriverFault(err: unknown): boolean {
  if (err instanceof ObjectNotFound) return false;
  if (err instanceof AppError && err.code < 500) return false;
  return !(err instanceof Error && (err.name === 'AbortError' || err.message === 'context canceled'));
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
