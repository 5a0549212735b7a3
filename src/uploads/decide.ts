import path from 'node:path';
import { BadRequest, Forbidden, TooLarge } from '../errors.js';
import type { View } from '../view/view.js';

/**
 * What every request of a resumable upload is decided on, whichever protocol carries it: the
 * target as the account and rules are now, and the bounds on what an upload may declare.
 */

/**
 * The smallest chunk (OpenList's X-Chunk-Size) and tus PATCH body, but the last: clients send
 * far more (OpenList's web UI the `multipart_chunk_size` setting, ≥ 1 MiB; TUSKit 500 KiB;
 * tus-js-client and Uppy the whole rest by default; tus-android and tus-py 2 MiB), so none trips
 * it, while a 1 MiB file can no longer take a million requests.
 */
export const MIN_CHUNK = 64 * 1024;
export const MAX_CHUNK = 5 * 1024 * 1024 * 1024;

export const MSG_MOVED = "the upload's folder is no longer where it was when the upload began (the account's base path changed); start the upload again";

/** Where an upload was started: the path the client gave, below the base path it had then. */
export interface Origin {
  /** The client path; on rows from before it was kept (no `base`), the virtual path. */
  path: string;
  /** The account's base path when the upload began; absent on rows from before. */
  base?: string;
  /** The virtual path when the upload began (a client path in a named root does not lie below `base`); absent on rows from before. */
  target?: string;
}

const within = (root: string, p: string) => root === '/' || p === root || p.startsWith(`${root}/`);
const joinBase = (base: string, client: string) => (base === '/' ? client : `${base}${client}`);

/** The virtual path the upload's bytes were staged for (an S3 storage's multipart upload is of that object). */
export function startedAt(o: Origin): string {
  if (o.target !== undefined) return o.target;
  return o.base === undefined ? o.path : joinBase(o.base, o.path);
}

/** The upload's path as its client gave it; for a row from before, as seen below `root`, if it is. */
function clientPathOf(o: Origin, root: string): string | undefined {
  if (o.base !== undefined) return o.path;
  if (!within(root, o.path)) return undefined;
  return root === '/' ? o.path : o.path.slice(root.length) || '/';
}

/** The path an upload's snapshot shows its client. */
export function shownPath(o: Origin, root: string): string {
  return clientPathOf(o, root) ?? `/${path.posix.basename(o.path)}`;
}

/**
 * Decides the upload's target again on `view` (the account as it is now): the client path must
 * still name the file the bytes were staged for (a base path moved since is refused, never
 * followed into the old area or into a new one the client did not check), and the rules must
 * allow a put there now (bits, hide, folder passwords, write rules, system files). Returns the
 * virtual path.
 */
export function decideTarget(view: View, o: Origin): string {
  const client = clientPathOf(o, view.root);
  const now = client === undefined ? undefined : view.virtual(client);
  if (now === undefined || now !== startedAt(o)) throw new Forbidden(MSG_MOVED);
  view.checkPut(now);
  return now;
}

/** A chunk size below MIN_CHUNK is refused unless one chunk holds the whole file. */
export function checkChunkSize(chunkSize: number, size: number): void {
  if (!Number.isSafeInteger(chunkSize) || chunkSize < 1 || chunkSize > MAX_CHUNK || (chunkSize < MIN_CHUNK && chunkSize < size)) {
    throw new BadRequest(`the chunk size must be between ${MIN_CHUNK} and ${MAX_CHUNK} bytes (or hold the whole file)`);
  }
}

/**
 * Refuses a declared size that can not fit: more than the storage's free space (where its driver
 * reports usage) or than the staging area's (where the bytes wait for completion). The numbers
 * are not shown: `hide_storage_details` may keep them from users.
 */
export function requireSpace(size: number, free: { storage?: number; staging?: number }): void {
  if (free.storage !== undefined && size > free.storage) throw new TooLarge(`not enough free space on the storage for ${size} bytes`);
  if (free.staging !== undefined && size > free.staging) throw new TooLarge(`not enough free space on the server to receive ${size} bytes`);
}
