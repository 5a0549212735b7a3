// The driver interface (Driver and its optional capabilities), the objects drivers report, and the
// errors they throw. A driver throws the kinds of src/errors.ts: ObjectNotFound for a missing
// object, UploadIntegrityError for a body other than declared, StorageError for a refusal or
// failure its storage reported; anything else is reported as the storage's own text (Upstream).
import type { Readable } from 'node:stream';
import { type ErrorKind, KindError, Missing } from '../errors.js';
import type { LinkFetcher } from '../net/link-fetch.js';

/** An entry as a driver reports it. Paths given to drivers are relative to the storage root. */
export interface Obj {
  name: string;
  size: number;
  isDir: boolean;
  modified: Date;
  created?: Date;
  /** Hashes by name: md5, sha1, sha256, gcid. */
  hash?: Record<string, string>;
  /** A thumbnail URL the driver provides. */
  thumb?: string;
  /** The driver makes a thumbnail itself: reachable as a link with type `thumb`. */
  selfThumb?: boolean;
  /** A symbolic link (drivers with `canonical` mark theirs): it may lead out of the folder holding it. */
  symlink?: boolean;
}

/** A readable file: ranges are inclusive byte offsets. */
export interface FileHandle {
  size: number;
  modified: Date;
  open(start: number, end: number): Promise<Readable>;
  /** The same bytes as a local file (the Local driver): read directly when nothing needs to pass through `open`. */
  path?: string;
}

/** How to fetch a file: a URL (possibly redirected to) and/or a local reader (always proxied). */
export interface Link {
  url?: string;
  header?: Record<string, string>;
  /** Milliseconds the link may be cached. */
  expiration?: number;
  file?: FileHandle;
  /** Content type when the driver knows better than the extension (e.g. generated thumbnails). */
  contentType?: string;
  /**
   * The URL is storage content (e.g. a line of a UrlTree), not an address the driver got from
   * its admin-configured peer: the server fetches it only on public addresses unless the
   * setting url_fetch_allow_private is on (SSRF guard, src/net/link-fetch.ts).
   */
  untrustedUrl?: boolean;
}

export interface LinkArgs {
  /** The `type` query of /d and /p (e.g. `thumb`). */
  type?: string;
  ip?: string;
  header?: Record<string, string | string[] | undefined>;
}

/** Driver flags (wire-api.md §10.3); serialized under `config` by /api/admin/driver/*. */
export interface DriverConfig {
  name: string;
  localSort: boolean;
  onlyLocal: boolean;
  onlyProxy: boolean;
  noCache: boolean;
  noUpload: boolean;
  needMs: boolean;
  defaultRoot: string;
  alert: string;
  checkStatus: boolean;
  noOverwriteUpload: boolean;
  proxyRangeOption: boolean;
}

export type FormItemType = 'string' | 'text' | 'number' | 'bool' | 'select';

export interface FormItem {
  name: string;
  type: FormItemType;
  default: string;
  options: string;
  required: boolean;
  help: string;
}

/** The core every driver has. Optional capabilities are separate interfaces, checked at run time. */
export interface Driver {
  init(): Promise<void>;
  drop(): Promise<void>;
  /**
   * Entries of a folder; throws ObjectNotFound for a missing folder. `refresh`: the client asked
   * for a fresh listing (fs has dropped its cache); a driver over a server with its own cache
   * may pass it on (the OpenList driver's `pass_refresh_flag_to_upsteam`).
   */
  list(path: string, args?: { refresh?: boolean }): Promise<Obj[]>;
  /** One entry; throws ObjectNotFound when missing. */
  get(path: string): Promise<Obj>;
  link(path: string, args: LinkArgs): Promise<Link>;
  /**
   * Optional: `get` and `link` of one file at once, where the driver answers both from one look
   * (Local: one symlink resolution and one stat instead of two each). Throws as `get` does.
   */
  getLink?(path: string, args: LinkArgs): Promise<{ obj: Obj; link: Link }>;
  /** The addition after init (drivers may refresh tokens); persisted by the storage manager. */
  addition(): Record<string, unknown>;
  /**
   * True when a put's `modified` is always the time the file lists with afterwards (Local sets
   * it); otherwise the storage may stamp its own (S3: the upload's time). A sync run records it,
   * so that the next run need not record the destination's times again.
   */
  readonly keepsModified?: boolean;
  /**
   * Optional: a cheap validator of a folder's listing (e.g. its mtime). A cached listing whose
   * stamp no longer matches is listed again, so changes made outside this server show at once.
   */
  listStamp?(path: string): Promise<string>;
  /**
   * Optional: where a path really is once every symlink on it is followed, as a path of this
   * storage (Local). Share links use it so a link inside a shared folder reaches nothing else.
   * A driver that has it marks the links it lists with `Obj.symlink`.
   */
  canonical?(path: string): Promise<string>;
  /** Optional: `/api/fs/other` (driver-defined methods). */
  other?(path: string, method: string, data: unknown): Promise<unknown>;
  /** Optional: the space of the storage in bytes, where the back end can tell (OpenList's mount_details). */
  usage?(): Promise<{ total: number; free: number }>;

  // Write capabilities, each optional: the fs layer checks for them and falls back (copy and
  // move across storages become read + put) or answers `not implement`.
  /** Creates one folder `name` in the existing folder `parent`. */
  makeDir?(parent: string, name: string): Promise<void>;
  rename?(path: string, newName: string): Promise<void>;
  /** Moves `src` into the existing folder `dstDir` (same storage). */
  move?(src: string, dstDir: string): Promise<void>;
  /** Copies `src` (file or folder) into the existing folder `dstDir` (same storage). */
  copy?(src: string, dstDir: string): Promise<void>;
  remove?(path: string): Promise<void>;
  /**
   * Stores a stream as `dstDir/name`, replacing an existing file only once the new one is
   * complete: a failed or interrupted put leaves no partial file under the real name.
   */
  put?(dstDir: string, file: UploadStream): Promise<void>;
  /**
   * Optional: stores a finished file of the local disk as `dstDir/name` by taking it over (a
   * rename where the file system allows), with the guarantees of `put`. Returns false when it can
   * not take this file (another file system): the caller then streams it through `put`.
   */
  putFile?(dstDir: string, file: LocalFile): Promise<boolean>;
  /** Optional: multipart uploads straight into the storage (S3), for resumable uploads. */
  multipart?: MultipartTarget;
  /**
   * Optional: uploads a client sends straight to the storage's back end, bypassing this server
   * (OpenList's direct upload). The tools this storage offers now (`HttpDirect`); none when its
   * settings leave it off.
   */
  directUploadTools?(): string[];
  /**
   * Optional, with directUploadTools: where a client sends the file `dstDir/name` of `size` bytes
   * with `tool`; undefined when the storage does not offer that tool. Access is decided above.
   */
  directUploadInfo?(dstDir: string, name: string, args: { tool: string; size: number }): Promise<HttpDirectUpload | undefined>;
  /** Sets the modification time of a file or folder (SFTP setstat, rclone's modtime). */
  setModified?(path: string, modified: Date): Promise<void>;

  // Archives read where the storage is (OpenList's ArchiveReader and ArchiveDecompress: a peer
  // server that browses and extracts its own archives). Each answers undefined (false for
  // archiveDecompress) when the driver does not do it for this storage: the server then reads the
  // archive itself through link(), by byte ranges (src/archive/service.ts decides).
  /** The archive's comment, encryption and inner tree; a wrong archive password throws the 202 error. */
  archiveMeta?(path: string, archivePassword: string): Promise<DriverArchiveMeta | undefined>;
  /** The entries of one inner folder (`inner`: `/` or `/a/b`). */
  archiveList?(path: string, inner: string, archivePassword: string): Promise<ArchiveObj[] | undefined>;
  /** Where to read one inner file's bytes (the peer extracts it). */
  archiveLink?(path: string, inner: string, archivePassword: string): Promise<Link | undefined>;
  /** Extracts the archive into `dstDir` of the same storage on the storage's side; true when done so. */
  archiveDecompress?(src: string, dstDir: string, args: ArchiveDecompressArgs): Promise<boolean>;
}

/** An inner entry of an archive read on the storage's side; folders may carry their children. */
export interface ArchiveObj {
  name: string;
  size: number;
  isDir: boolean;
  modified: Date;
  children?: ArchiveObj[] | null;
}

export interface DriverArchiveMeta {
  comment: string;
  encrypted: boolean;
  /** The whole inner tree, or null when the storage lists inner folders one by one only. */
  tree: ArchiveObj[] | null;
}

export interface ArchiveDecompressArgs {
  password: string;
  inner: string;
  putIntoNewDir: boolean;
  overwrite: boolean;
}

/** A file to store: a stream of known (or unknown, -1) size. */
export interface UploadStream {
  name: string;
  size: number;
  stream: Readable;
  modified?: Date;
  mimetype?: string;
  /** Hashes the client declared (md5, sha1, sha256): a mismatch fails the put. */
  hashes?: Record<string, string>;
  /** Called with the bytes stored so far. */
  onProgress?(bytes: number): void;
  signal?: AbortSignal;
}

/** A finished file on the local disk to store (a resumable upload's staging file). */
export interface LocalFile {
  name: string;
  /** Absolute path of the file; taken over (moved away) when stored. */
  path: string;
  size: number;
  modified?: Date;
  /** Hashes the client declared: a mismatch fails the put and leaves the file where it was. */
  hashes?: Record<string, string>;
  onProgress?(bytes: number): void;
}

/**
 * An `HttpDirect` upload: the client sends the file's bytes with `method` to `url` (with
 * `headers`), in one request, or with `chunkSize` > 0 in requests of that size carrying
 * Content-Range. The URL is a capability: it admits that one file only, until `expiresSeconds`
 * after it was made.
 */
export interface HttpDirectUpload {
  url: string;
  method: 'PUT' | 'POST';
  chunkSize: number;
  headers?: Record<string, string>;
  expiresSeconds: number;
}

/**
 * A multipart upload into the storage: begun for a target, parts sent in any order (numbered
 * from 1; each but the last at least `minPart` bytes), the object appears only when `finish`
 * assembles the parts; `abort` drops them.
 */
export interface MultipartTarget {
  minPart: number;
  maxPart: number;
  maxParts: number;
  begin(dstDir: string, name: string, mimetype?: string): Promise<string>;
  /** Sends `size` bytes of `body` as part `n`; returns its ETag. */
  part(dstDir: string, name: string, uploadId: string, n: number, body: Readable, size: number): Promise<string>;
  finish(dstDir: string, name: string, uploadId: string, parts: Array<{ n: number; etag: string }>): Promise<void>;
  abort(dstDir: string, name: string, uploadId: string): Promise<void>;
}

/** Raised when a put's body is shorter or longer than its declared size, or a hash differs (kind Integrity). */
export class UploadIntegrityError extends KindError {
  constructor(message: string) {
    super('Integrity', message);
  }
}

/**
 * A refusal or failure the storage behind a driver reported (a permission of its file system, a
 * name taken, no space left): its kind says what. OpenList passes a driver's error through its
 * routes with code 500 and the text (server/api-codes.ts).
 */
export class StorageError extends KindError {
  constructor(kind: ErrorKind, message: string) {
    super(kind, message);
  }
}

export interface DriverFactory {
  config: DriverConfig;
  additional: FormItem[];
  /** Builds a driver for one storage; the registry's lazily loaded drivers answer a promise. */
  create(addition: Record<string, unknown>, ctx: DriverContext): Driver | Promise<Driver>;
}

export interface DriverContext {
  /** The storage's mount path, for drivers that build URLs back to this server. */
  mountPath: string;
  tempDir: string;
  /** Type code of a file name from the extension settings (wire-api.md §6.2). */
  fileType(name: string): number;
  /** The virtual tree, for drivers that overlay other mounted paths (Alias, Crypt). */
  vfs?: VirtualFs;
  /** Requests of link URLs through the SSRF guard (UrlTree's size probes). */
  links: LinkFetcher;
  /** Signs a full virtual path for /d and /p (drivers that write links into content: Strm). */
  sign?(virtualPath: string): string;
  /** The configured site_url ('' when unset). */
  siteUrl?: string;
  /** Stores a changed addition of this storage (a driver whose settings are its content: UrlTree's `writable`). */
  saveAddition?(addition: Record<string, unknown>): Promise<void>;
}

/**
 * Raised by drivers for a missing object (kind NotFound, as every missing file or folder: it is a
 * Missing); the fs layer prefixes the original's words (`failed get obj: object not found`).
 */
export class ObjectNotFound extends Missing {
  constructor(what = 'object not found') {
    super(what);
  }
}

export function driverConfig(partial: Partial<DriverConfig> & { name: string }): DriverConfig {
  return {
    localSort: false,
    onlyLocal: false,
    onlyProxy: false,
    noCache: false,
    noUpload: false,
    needMs: false,
    defaultRoot: '',
    alert: '',
    checkStatus: false,
    noOverwriteUpload: false,
    proxyRangeOption: false,
    ...partial,
  };
}

export function item(name: string, type: FormItemType, extra: Partial<Omit<FormItem, 'name' | 'type'>> = {}): FormItem {
  return { name, type, default: '', options: '', required: false, help: '', ...extra };
}

/** Reads a driver's addition against its form: defaults filled, types coerced, required checked. */
export function readAddition(items: FormItem[], raw: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const it of items) {
    let v = raw[it.name];
    if (v === undefined || v === null || v === '') v = it.default === '' ? undefined : it.default;
    if (v === undefined) {
      // A missing bool or number is false or 0; a missing required text cannot be guessed.
      if (it.required && it.type !== 'bool' && it.type !== 'number') throw new Error(`${it.name} is required`);
      v = it.type === 'bool' ? false : it.type === 'number' ? 0 : '';
    }
    if (it.type === 'bool') v = v === true || v === 'true';
    else if (it.type === 'number') {
      const n = Number(v);
      if (!Number.isFinite(n)) throw new Error(`${it.name} must be a number`);
      v = n;
    } else {
      v = String(v);
      if (it.type === 'select' && it.options && v !== '' && !it.options.split(',').includes(v as string)) {
        throw new Error(`${it.name} must be one of ${it.options}`);
      }
    }
    out[it.name] = v;
  }
  return out;
}

/**
 * A driver's factory: its form and flags, and a storage's driver made from the addition as read
 * against `read` (the form itself, unless the driver relaxes some of its fields).
 */
export function defineDriver(
  config: DriverConfig,
  additional: FormItem[],
  make: (options: Record<string, unknown>, ctx: DriverContext) => Driver,
  read: FormItem[] = additional,
): DriverFactory {
  return { config, additional, create: (addition, ctx) => make(readAddition(read, addition), ctx) };
}

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
  /** The mount path of the storage holding `path` (overlays pair objects of one storage: a move there stays server-side). */
  storageOf(path: string): string;
  /** The free bytes of the storage holding `path`; undefined when its driver can not tell (no `usage`, or it failed). */
  freeSpace(path: string): Promise<number | undefined>;
}
