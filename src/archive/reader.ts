import type { Readable } from 'node:stream';
import { KindError } from '../errors.js';
import type { ArchiveEntry } from './entries.js';

/** The answer of the original for a missing or wrong archive password: code 202. */
export const MSG_WRONG_ARCHIVE_PASSWORD = 'wrong archive password';
/** A missing or wrong archive password (kind PasswordRequired; OpenList's code 202: server/api-codes.ts). */
export class WrongArchivePassword extends KindError {
  constructor() {
    super('PasswordRequired', MSG_WRONG_ARCHIVE_PASSWORD);
  }
}
export const wrongPassword = () => new WrongArchivePassword();

/** An archive opened for reading, whatever its format. */
export interface OpenedArchive {
  comment: string;
  /** Some entry (or the listing itself) needs a password. */
  encrypted: boolean;
  /**
   * Every entry with a safe name, in archive order; unsafe names (zip-slip) are in `refused`.
   * Iterable, not an array: a zip keeps compact records and makes each object as it is read.
   */
  entries: Iterable<ArchiveEntry>;
  count: number;
  refused: string[];
  /** One file entry's bytes; wrong or missing password → 202. */
  open(inner: string, password: string, signal?: AbortSignal): Promise<Readable>;
  /**
   * Every file entry under `prefix`, in archive order, each handed to `each` with its bytes (one
   * pass for streaming formats). `each` must consume or destroy the stream.
   */
  extract(prefix: string, password: string, each: (entry: ArchiveEntry, body: Readable) => Promise<void>, signal?: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

export const under = (prefix: string, p: string) => prefix === '/' || p === prefix || p.startsWith(`${prefix}/`);

/** The file entry at `inner`, if any. */
export function findFile(archive: OpenedArchive, inner: string): ArchiveEntry | undefined {
  for (const e of archive.entries) if (e.path === inner && !e.isDir) return e;
  return undefined;
}
