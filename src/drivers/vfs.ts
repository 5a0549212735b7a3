import type { Readable } from 'node:stream';
import type { Link, LinkArgs, Obj, UploadStream } from './types.js';

/**
 * The virtual tree as drivers that overlay other mounts see it (Alias, Crypt): full virtual
 * paths, no user rules (the request was checked against the overlay's own path), the target
 * storages' caches kept up to date. Missing objects raise ObjectNotFound like a driver would.
 */
export interface VirtualFs {
  list(path: string): Promise<Obj[]>;
  get(path: string): Promise<Obj>;
  link(path: string, args: LinkArgs): Promise<Link>;
  /** Bytes start..end (inclusive) of a file, from its reader or its URL. */
  open(path: string, start: number, end: number): Promise<Readable>;
  /** Creates a folder (and missing parents). */
  mkdir(path: string): Promise<void>;
  rename(path: string, newName: string): Promise<void>;
  /** Moves or copies one object to a full target path, across storages too. */
  moveTo(src: string, dst: string): Promise<void>;
  copyTo(src: string, dst: string): Promise<void>;
  remove(path: string): Promise<void>;
  /** Stores a stream as `dir/file.name`, replacing an existing file once complete. */
  put(dir: string, file: UploadStream): Promise<void>;
}
