import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * Loads a CommonJS package on first use. Used for packages only some installations need
 * (PostgreSQL and MySQL clients, SSH key parsing, QR codes), so a default SQLite server does
 * not keep them in memory.
 */
export function lazyRequire<T>(name: string): () => T {
  let mod: T | undefined;
  return () => (mod ??= require(name) as T);
}
