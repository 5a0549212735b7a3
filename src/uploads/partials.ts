import { randomBytes } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { UploadRow, UploadsRepo } from '../db/uploads.js';
import type { Obj } from '../drivers/types.js';
import { BadRequest, Conflict } from '../errors.js';
import type { View } from '../view/view.js';
import { decideTarget, MIN_CHUNK } from './decide.js';
import type { Staging, Written } from './staging.js';

/** The protocol of the rows of interrupted SFTP and FTP uploads (one per user and path, shared by both fronts). */
export const PARTIAL = 'partial';
/**
 * How long a user's partials read from the database are used (as the user cache's period): a
 * stat or listing costs no query in steady state; this node's own changes apply at once, another
 * node's within this period.
 */
const CACHE_MS = 2000;
/** A partial being written is marked as written this often, so that no sweep takes it as expired. */
const TOUCH_MS = 60_000;

/**
 * Interrupted SFTP and FTP uploads, kept so that the same user can resume them (OpenSSH `reput`
 * / `put -a`, FTP `REST` + `STOR`, `APPE`): every SFTP/FTP upload writes into a staging file of
 * the resumable uploads' area (one row of `uploads`, protocol `partial`, keyed by user and client
 * path below the base path of its start, expiring after `upload_expire_hours` without a write as
 * the other uploads do, removed by the same sweep). A finished upload is committed by the view's
 * `putFile` (Local: renamed into place), so no reader ever sees a torn file under the real name;
 * an interrupted one stays a partial that only its user's `stat`, `SIZE` and listings show.
 * Each step is decided on the view it is given (the session's live view).
 */
export class Partials {
  /** Partials being written by a session of this process (a second writer is refused). */
  private readonly busy = new Set<string>();
  /** Each user's partials as last read, with the time of the read. */
  private readonly cache = new Map<number, { at: number; rows: Promise<UploadRow[]> }>();

  constructor(
    private readonly repo: UploadsRepo,
    private readonly staging: Staging,
    private readonly expiryMs: () => number,
  ) {}

  private rowsOf(userId: number): Promise<UploadRow[]> {
    const hit = this.cache.get(userId);
    if (hit && Date.now() - hit.at < CACHE_MS) return hit.rows;
    const rows = this.repo.receivingOf(userId, PARTIAL);
    const entry = { at: Date.now(), rows };
    this.cache.set(userId, entry);
    rows.catch(() => this.cache.get(userId) === entry && this.cache.delete(userId));
    return rows;
  }

  private changed(row: UploadRow): void {
    this.cache.delete(row.user_id);
  }

  private expired(row: UploadRow): boolean {
    const ms = this.expiryMs();
    return ms > 0 && row.updated_at + ms < Date.now();
  }

  /** Whether `row` is a live partial of `view`'s user that still names virtual path `p` (or any, without `p`). */
  private targetOf(view: View, row: UploadRow): string | undefined {
    if (row.user_id !== view.user.id || row.state !== 'receiving' || this.expired(row)) return undefined;
    const { base, target, pwdTs } = JSON.parse(row.options) as { base?: string; target?: string; pwdTs?: number };
    if (pwdTs !== undefined && pwdTs !== view.user.pwdTs) return undefined;
    try {
      return decideTarget(view, { path: row.path, base, target });
    } catch {
      return undefined;
    }
  }

  /** The user's partial of virtual path `p`, when there is one. */
  async find(view: View, p: string): Promise<UploadRow | undefined> {
    const client = view.client(p);
    return (await this.rowsOf(view.user.id)).find((r) => r.path === client && this.targetOf(view, r) === p);
  }

  /** The entry a partial shows its user in place of (or beside) what the storage holds. */
  static entry(row: UploadRow, name: string): Obj {
    return { name, size: row.received, isDir: false, modified: new Date(row.updated_at) };
  }

  /** What `stat` shows the user at `p`: its partial, else the storage's object. */
  async stat(view: View, p: string): Promise<Obj> {
    const row = await this.find(view, p);
    if (!row) return view.stat(p);
    return Partials.entry(row, path.posix.basename(p));
  }

  /** A folder's entries with the user's partials in it (replacing an entry of the same name). */
  async entries(view: View, folder: string, objs: Obj[]): Promise<Obj[]> {
    const rows = await this.rowsOf(view.user.id);
    const mine = new Map<string, UploadRow>();
    for (const r of rows) {
      const target = this.targetOf(view, r);
      if (target && path.posix.dirname(target) === folder) mine.set(path.posix.basename(target), r);
    }
    if (mine.size === 0) return objs;
    const out = objs.filter((o) => o.isDir || !mine.has(o.name));
    for (const [name, r] of mine) if (!objs.some((o) => o.isDir && o.name === name)) out.push(Partials.entry(r, name));
    return out;
  }

  /**
   * Starts writing to virtual path `p` (after the view's checkUpload): at `offset` of the user's
   * partial there (resume; cut to `offset` when it holds more), or a new partial replacing any
   * old one (`offset` 0 with `fresh`). `seed`, when the storage's file is resumed and there is
   * no partial, gives its first `offset` bytes.
   */
  async begin(view: View, p: string, offset: number, opts: { fresh: boolean; seed?: () => Promise<Readable> }): Promise<PartialWrite> {
    let row = await this.find(view, p);
    if (row && this.busy.has(row.id)) throw new Conflict('this file is being uploaded by another session');
    if (row && (opts.fresh || offset > row.received)) {
      if (!opts.fresh) throw new BadRequest(`the interrupted upload holds ${row.received} bytes, not ${offset}`);
      await this.drop(row);
      row = undefined;
    }
    if (!row && offset > 0 && !opts.seed) throw new BadRequest(`there is no interrupted upload of ${offset} bytes or more to resume`);
    row ??= await this.create(view, p);
    this.busy.add(row.id);
    try {
      // A new partial resuming the storage's file starts with that file's first `offset` bytes.
      if (row.received === 0 && offset > 0) {
        const seeded = await this.staging.write(row.id, 0, await opts.seed!(), Number.MAX_SAFE_INTEGER);
        if (seeded.bytes < offset) throw new BadRequest(`the file holds ${seeded.bytes} bytes, not ${offset}`);
      }
      const fh = await this.staging.open(row.id);
      await fh.truncate(offset);
      return new PartialWrite(this, row, fh, offset);
    } catch (err) {
      this.busy.delete(row.id);
      throw err;
    }
  }

  private async create(view: View, p: string): Promise<UploadRow> {
    const now = Date.now();
    // The fields of service.ts's UploadOptions a partial needs.
    const options = { overwrite: true, password: '', hashes: {}, base: view.root, target: p, pwdTs: view.user.pwdTs };
    const row: UploadRow = {
      id: randomBytes(16).toString('hex'),
      user_id: view.user.id,
      protocol: PARTIAL,
      path: view.client(p),
      // -1: the size is not known before the end (receivingTo finds partials by it).
      size: -1,
      chunk_size: MIN_CHUNK,
      received: 0,
      state: 'receiving',
      attempt: 0,
      progress: 0,
      error: '',
      options: JSON.stringify(options),
      created_at: now,
      updated_at: now,
      ranges: '[]',
    };
    await this.repo.create(row);
    this.changed(row);
    return row;
  }

  /** Records the bytes a write left (its row's `received` and time) and lets the partial be resumed. */
  async keep(row: UploadRow, bytes: number): Promise<void> {
    this.busy.delete(row.id);
    await this.repo.setPartial(row.id, bytes, Date.now());
    this.changed(row);
  }

  /** Marks a partial being written as alive, with its bytes so far. */
  async touch(row: UploadRow, bytes: number): Promise<void> {
    await this.repo.setPartial(row.id, bytes, Date.now());
    this.changed(row);
  }

  /** Stores the partial's file at `p` through the view (decided as any put) and forgets it. */
  async commit(view: View, row: UploadRow, p: string, bytes: number, modified?: Date): Promise<void> {
    try {
      await view.putFile(p, { path: this.staging.file(row.id), size: bytes, modified }, true);
    } catch (err) {
      await this.keep(row, bytes);
      throw err;
    }
    this.busy.delete(row.id);
    await this.repo.delete(row.id);
    this.changed(row);
    await this.staging.drop(row.id);
  }

  /** Removes a partial and its bytes (a refused session, a fresh upload over it). */
  async drop(row: UploadRow): Promise<void> {
    this.busy.delete(row.id);
    await this.repo.delete(row.id);
    this.changed(row);
    await this.staging.drop(row.id);
  }

  /** Streams a body into the partial at `position`; a body cut short reports what was written. */
  write(row: UploadRow, position: number, body: Readable): Promise<Written> {
    return this.staging.write(row.id, position, body, Number.MAX_SAFE_INTEGER, { partial: true, file: this.staging.open(row.id) });
  }
}

/** One writer of a partial: positional writes into its staging file, then commit or keep. */
export class PartialWrite {
  /** Bytes from 0 to the furthest byte written. */
  size: number;
  private closed = false;
  /** Committed, kept or dropped: later calls do nothing. */
  private settled = false;
  private readonly alive: NodeJS.Timeout;

  constructor(
    private readonly partials: Partials,
    readonly row: UploadRow,
    private readonly fh: FileHandle,
    offset: number,
  ) {
    this.size = offset;
    this.alive = setInterval(() => void this.partials.touch(this.row, this.size).catch(() => undefined), TOUCH_MS);
    this.alive.unref();
  }

  async write(position: number, data: Buffer): Promise<void> {
    let done = 0;
    while (done < data.length) done += (await this.fh.write(data, done, data.length - done, position + done)).bytesWritten;
    this.size = Math.max(this.size, position + data.length);
  }

  async truncate(size: number): Promise<void> {
    await this.fh.truncate(size);
    this.size = size;
  }

  /** Streams a body from `position` (FTP): the size is where it ended; `interrupted` when cut short. */
  async stream(position: number, body: Readable): Promise<Written> {
    const written = await this.partials.write(this.row, position, body);
    this.size = position + written.bytes;
    return written;
  }

  private async release(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.alive);
    await this.fh.close().catch(() => undefined);
  }

  /** The upload finished: stored at `p` on `view` as it is now. */
  async commit(view: View, p: string, modified?: Date): Promise<void> {
    if (this.settled) return;
    this.settled = true;
    await this.release();
    await this.partials.commit(view, this.row, p, this.size, modified);
  }

  /** The upload was interrupted: its bytes stay, for the same user to resume. */
  async keep(): Promise<void> {
    if (this.settled) return;
    this.settled = true;
    await this.release();
    // Nothing written (a transfer that never started): nothing to resume.
    if (this.size === 0) await this.partials.drop(this.row);
    else await this.partials.keep(this.row, this.size);
  }

  /** The upload was refused: nothing stays. */
  async drop(): Promise<void> {
    if (this.settled) return;
    this.settled = true;
    await this.release();
    await this.partials.drop(this.row);
  }
}
