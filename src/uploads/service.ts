import { randomBytes } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { UploadClaimRow, UploadPartRow, UploadRow, UploadsRepo } from '../db/uploads.js';
import { AppError, BadRequest, Conflict, Exists, Forbidden, isKind, NotFound, TooLarge, TooManyRequests } from '../errors.js';
import type { FsWriter } from '../fs/write.js';
import type { Logger } from '../logger.js';
import type { Settings } from '../settings/service.js';
import type { View, ViewOptions, Views } from '../view/view.js';
import { checkChunkSize, decideTarget, MIN_CHUNK, type Origin, requireSpace, shownPath, startedAt } from './decide.js';
import { chunkIndexRanges, parseRanges, rangesOf } from './ranges.js';
import { Partials } from './partials.js';
import { closeAhead, PartMeter, PartTooLong, PartTooShort, Staging, UPLOAD_ID } from './staging.js';

export const SETTING = {
  enabled: 'multipart_enabled',
  chunkMb: 'multipart_chunk_size',
  expireHours: 'upload_expire_hours',
  maxParallel: 'upload_max_parallel',
} as const;

export const MSG_DISABLED = 'multipart upload is disabled';
/**
 * A completion that has shown no sign of life for this long was cut off (a killed node): another
 * process may take it over. A running completion beats every COMPLETION_BEAT_MS.
 */
const STALE_COMPLETION_MS = 5_000;
const COMPLETION_BEAT_MS = 1_000;
const SWEEP_EVERY_MS = 10 * 60_000;

export type Protocol = 'multipart' | 'tus';

/** What the upload was started with; kept so completion decides with the same inputs. */
export interface UploadOptions {
  overwrite: boolean;
  password: string;
  hashes: Record<string, string>;
  mimetype?: string;
  /** Milliseconds since the epoch. */
  modified?: number;
  /** tus Upload-Metadata as sent (returned on HEAD). */
  metadata?: string;
  /** Set when the bytes go straight into an S3 multipart upload. */
  s3?: S3Stage;
  /**
   * The account's base path when the upload began; the row's `path` is the client path below it.
   * Absent on rows from before: their `path` is the virtual path (decide.ts reads both).
   */
  base?: string;
  /** The virtual path the upload began for (decide.ts's Origin.target). */
  target?: string;
  /** The account's password stamp when the upload began: a password change since ends the upload, as it ends web sessions. */
  pwdTs?: number;
}

export interface CreateInput extends Omit<UploadOptions, 's3' | 'base' | 'pwdTs'> {
  protocol: Protocol;
  /** Virtual path of the file. */
  target: string;
  size: number;
  chunkSize?: number;
}

export const optionsOf = (row: UploadRow): UploadOptions => JSON.parse(row.options) as UploadOptions;
const originOf = (row: UploadRow): Origin => ({ path: row.path, base: optionsOf(row).base, target: optionsOf(row).target });
/** The virtual path an upload's bytes are staged for (where its S3 multipart upload is). */
const stagedFor = (row: UploadRow): string => startedAt(originOf(row));
/** The upload's path as its client sees it (the snapshot's `path`). */
export const clientPath = (row: UploadRow, view: View): string => shownPath(originOf(row), view.root);
export const totalChunks = (row: Pick<UploadRow, 'size' | 'chunk_size'>): number => (row.size === 0 ? 0 : Math.ceil(row.size / row.chunk_size));

/** Where an S3-staged upload's bytes go: its multipart upload and the bytes of one part. */
interface S3Stage {
  upload: string;
  /** Bytes of each part (a whole number of chunks); part `n` holds [(n-1)·partSize, n·partSize). */
  partSize: number;
}

/** A claim without a sign of life for this long belongs to a request that is gone. */
const STALE_CLAIM_MS = 30_000;
const BEAT_MS = 5_000;
const HOST = os.hostname();
const OWNER = `${HOST}:${process.pid}`;
/** tus writes one range at a time: every PATCH claims this start, so two never run together. */
const TUS_CLAIM = -1;

/** A claim whose request is gone: no sign of life lately, or its process on this host is dead. */
function claimIsDead(c: UploadClaimRow, now = Date.now()): boolean {
  if (c.beat < now - STALE_CLAIM_MS) return true;
  const at = c.owner.lastIndexOf(':');
  const pid = Number(c.owner.slice(at + 1));
  if (c.owner.slice(0, at) !== HOST || pid === process.pid || !Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** One request at a time per key in this process (same chunk sent twice at once: the second waits). */
class KeyedLock {
  private readonly tails = new Map<string, Promise<unknown>>();
  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const before = this.tails.get(key) ?? Promise.resolve();
    const mine = before.then(fn, fn);
    const tail = mine.catch(() => undefined);
    this.tails.set(key, tail);
    try {
      return await mine;
    } finally {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}

const s3Part = (n: number, etag: string) => `s3:${n}:${etag}`;

/**
 * Resumable uploads, shared by OpenList's multipart routes and the tus endpoint: the state lives
 * in the database (so any node, and a restarted one, continues an upload). The bytes go either
 * into one staging file per upload under temp_dir, each at its final offset, which completion
 * hands to the storage whole (Local renames it into place; others get it streamed once), or, for
 * S3 storages, straight into an S3 multipart upload of the target object. A request writing bytes
 * holds a claim on their range in the database, so two writers never mix bytes and completion
 * never reads a range being written. The per-user view decides at creation, and every later
 * request (each chunk or PATCH, and the completion) decides the target again on the account as it
 * is then (decide.ts): the row keeps the client path and the base path it was below.
 */
export class Uploads {
  readonly staging: Staging;
  /** Interrupted SFTP and FTP uploads kept for their user to resume, in the same staging area and expiring the same way. */
  readonly partials: Partials;
  private timer?: NodeJS.Timeout;
  private readonly locks = new KeyedLock();

  constructor(
    private readonly repo: UploadsRepo,
    private readonly settings: Settings,
    private readonly writer: FsWriter,
    tempDir: string,
    private readonly log: Logger,
  ) {
    this.staging = new Staging(tempDir);
    this.partials = new Partials(repo, this.staging, () => this.expiryMs());
  }

  expiryMs(): number {
    return Math.max(0, this.settings.getNumber(SETTING.expireHours, 24)) * 3_600_000;
  }

  defaultChunkSize(): number {
    return Math.max(1, this.settings.getNumber(SETTING.chunkMb, 10)) * 1024 * 1024;
  }

  requireEnabled(): void {
    if (!this.settings.getBool(SETTING.enabled)) throw new Forbidden(MSG_DISABLED);
  }

  /** Checks the view's rules on a target as an upload would be stored there. */
  private async checkTarget(view: View, target: string, overwrite: boolean): Promise<void> {
    view.checkPut(target);
    const existing = await view.find(target);
    if (existing?.isDir) throw new Exists(`file [${path.posix.basename(target)}] exists`);
    if (existing && !overwrite) throw new Exists('file exists');
  }

  /**
   * The part size of a new upload's S3 staging, when its storage has multipart uploads and the
   * parts fit its limits. A declared whole-file hash keeps the bytes local: it must be checked
   * before the file appears, and S3 can not hash the assembled parts.
   */
  private s3PartSize(view: View, input: CreateInput, chunkSize: number): number | undefined {
    if (input.size === 0 || Object.keys(input.hashes).length > 0) return undefined;
    const m = view.multipartTarget(input.target);
    if (!m) return undefined;
    const partSize = chunkSize * Math.max(1, Math.ceil(m.minPart / chunkSize));
    if (partSize > m.maxPart || Math.ceil(input.size / partSize) > m.maxParts) return undefined;
    return partSize;
  }

  /**
   * Refuses a size that can not fit on the target's storage, or in the staging area when the
   * bytes wait there (all but OpenList chunks sent one by one into an S3 part each).
   */
  private async requireSpace(input: CreateInput, chunkSize: number, partSize: number | undefined): Promise<void> {
    const staged = partSize === undefined || input.protocol !== 'multipart' || partSize !== chunkSize;
    requireSpace(input.size, { storage: await this.writer.freeSpace(input.target), staging: staged ? await this.staging.free() : undefined });
  }

  /**
   * The caller's unfinished upload of `size` bytes to `target` that would go on as it began: the
   * same file below the same base path, and the password unchanged since (OpenList's init
   * resumes it; status by path answers it).
   */
  async openTo(view: View, protocol: Protocol, target: string, size: number): Promise<UploadRow | undefined> {
    const rows = await this.repo.receivingTo(view.user.id, protocol, [view.client(target), target], size);
    return rows.find((r) => {
      const { pwdTs } = optionsOf(r);
      if (this.expired(r) || (pwdTs !== undefined && pwdTs !== view.user.pwdTs)) return false;
      try {
        return decideTarget(view, originOf(r)) === target;
      } catch {
        return false;
      }
    });
  }

  /**
   * The view an upload's request is decided by: its user's account as it is now (a live
   * reference, re-read per request), so a narrowed base path, removed bits or a new rule apply to
   * the next chunk, and a deleted or disabled user, or a password changed since the upload began,
   * ends it: the upload fails for good and its bytes are dropped.
   */
  async viewOf(views: Views, row: UploadRow, opts: ViewOptions): Promise<View> {
    const { pwdTs } = optionsOf(row);
    try {
      return await views.live({ id: row.user_id, pwdTs: pwdTs ?? 0 }, opts, { pwdTs: pwdTs !== undefined }).now();
    } catch (err) {
      if (isKind(err, 'Unauthorized') && row.state === 'receiving' && (await this.repo.transition(row.id, ['receiving'], 'failed_permanent', { error: (err as Error).message }))) {
        await this.dropBytes(row);
      }
      throw err;
    }
  }

  /** Starts an upload, or (OpenList's init) resumes the caller's unfinished one to the same path and size. */
  async create(view: View, input: CreateInput, resume = false): Promise<{ row: UploadRow; resumed: boolean }> {
    if (!Number.isSafeInteger(input.size) || input.size < 0) throw new BadRequest('the file size is not a size');
    const chunkSize = input.chunkSize ?? this.defaultChunkSize();
    checkChunkSize(chunkSize, input.size);
    await this.checkTarget(view, input.target, input.overwrite);
    // A file its quota has no room for is refused at init, before any chunk (and again as it completes).
    await view.requireRoom(input.target, input.size);
    if (resume) {
      const open = await this.openTo(view, input.protocol, input.target, input.size);
      if (open && open.chunk_size === chunkSize) return { row: open, resumed: true };
    }
    const max = this.settings.getNumber(SETTING.maxParallel, 0);
    if (max > 0 && (await this.repo.countReceiving(view.user.id)) >= max) {
      throw new TooManyRequests(`too many unfinished uploads (at most ${max}); complete or abort one first`);
    }
    const now = Date.now();
    const { protocol, target, size, chunkSize: _c, ...options } = input;
    const partSize = this.s3PartSize(view, input, chunkSize);
    await this.requireSpace(input, chunkSize, partSize);
    const s3: S3Stage | undefined = partSize === undefined ? undefined : { upload: await view.beginMultipart(target, input.mimetype), partSize };
    const row: UploadRow = {
      id: randomBytes(16).toString('hex'),
      user_id: view.user.id,
      protocol,
      // The client path: every later request decides it again below the base path as it is then.
      path: view.client(target),
      size,
      chunk_size: chunkSize,
      received: 0,
      state: 'receiving',
      attempt: 0,
      progress: 0,
      error: '',
      options: JSON.stringify({ ...options, base: view.root, target, pwdTs: view.user.pwdTs, ...(s3 ? { s3 } : {}) } satisfies UploadOptions),
      created_at: now,
      updated_at: now,
      ranges: '[]',
    };
    try {
      await this.repo.create(row);
    } catch (err) {
      if (s3) await this.writer.abortMultipart(target, s3.upload).catch(() => undefined);
      throw err;
    }
    return { row, resumed: false };
  }

  /** The caller's upload; another user's is as missing as an unknown id. */
  async get(view: View, id: string): Promise<UploadRow> {
    const row = UPLOAD_ID.test(id) ? await this.repo.byId(id) : undefined;
    if (!row || row.user_id !== view.user.id) throw new NotFound('upload not found');
    if (row.state === 'receiving' && this.expired(row)) throw new NotFound('upload expired');
    return row;
  }

  expired(row: UploadRow): boolean {
    const ms = this.expiryMs();
    return ms > 0 && row.updated_at + ms < Date.now();
  }

  expiresAt(row: UploadRow): Date | undefined {
    const ms = this.expiryMs();
    return ms > 0 ? new Date(row.updated_at + ms) : undefined;
  }

  private requireReceiving(row: UploadRow): void {
    if (row.state === 'completing') throw new Conflict('the upload is being completed');
    if (row.state !== 'receiving') throw new Conflict(`the upload is ${row.state}`);
  }

  /** Claims ranges of an upload for this request, refreshed while it runs; undefined when it can not. */
  private async claim(row: UploadRow, starts: number[], opts: { offset?: number; forget?: boolean; exclusive?: boolean }) {
    const token = randomBytes(16).toString('hex');
    const got = await this.repo.claim(row.id, { token, owner: OWNER, beat: Date.now() }, starts, opts, (c) => claimIsDead(c));
    if (got !== 'ok') return { token: undefined, why: got };
    const timer = setInterval(() => void this.repo.beat(token, Date.now()).catch(() => undefined), BEAT_MS);
    timer.unref();
    return { token, why: got, stop: () => clearInterval(timer) };
  }

  /** Why a claim was refused, as the error the client gets. */
  private async refused(row: UploadRow, why: 'busy' | 'closed', what: string): Promise<never> {
    if (why === 'busy') throw new Conflict(`${what} is being received by another request; send it again once that one is done`);
    const now = await this.repo.byId(row.id);
    if (now?.state === 'receiving') throw new Conflict(`the upload is at offset ${now.received}`);
    throw new Conflict(`the upload is ${now?.state ?? 'gone'}`);
  }

  /**
   * Stores chunk `index` (OpenList's chunk route); sending a chunk again replaces it whole.
   * `ahead` (Staging.openAhead, begun before the request's checks) is taken over: written through
   * as the staging file, or closed.
   */
  async putChunk(view: View, row: UploadRow, index: number, body: Readable, declared?: number, ahead?: Promise<FileHandle | undefined>): Promise<UploadRow> {
    let taken = false;
    try {
      this.requireReceiving(row);
      decideTarget(view, originOf(row));
      const total = totalChunks(row);
      if (!Number.isSafeInteger(index) || index < 0 || index >= total) throw new BadRequest(`X-Chunk-Index must be between 0 and ${total - 1}`);
      const start = index * row.chunk_size;
      const expected = Math.min(row.chunk_size, row.size - start);
      if (declared !== undefined && declared !== expected) throw new BadRequest(`chunk ${index} must be ${expected} bytes, not ${declared}`);
      // The chunk is one of the account's transfers, paced by its upload rate (view/meters.ts).
      return await view.receive(body, (paced) => {
        taken = true;
        return this.storeChunk(row, index, start, expected, paced, ahead);
      });
    } finally {
      if (!taken) closeAhead(ahead);
    }
  }

  private async storeChunk(row: UploadRow, index: number, start: number, expected: number, body: Readable, ahead?: Promise<FileHandle | undefined>): Promise<UploadRow> {
    const s3 = optionsOf(row).s3;
    const toS3 = s3 !== undefined && s3.partSize === row.chunk_size;
    if (toS3) closeAhead(ahead);
    const recorded = await this.locks.run(`${row.id}:${start}`, async () => {
      // The staging file is opened while the claim is decided (or was, with the request's
      // checks): both stand before the first byte.
      const file = toS3 ? undefined : ahead ? ahead.then((fh) => fh ?? this.staging.open(row.id)) : this.staging.open(row.id);
      file?.catch(() => undefined);
      let c;
      try {
        c = await this.claim(row, [start], { forget: true });
        if (!c.token) await this.refused(row, c.why as 'busy' | 'closed', `chunk ${index}`);
      } catch (err) {
        await file?.then((fh) => fh.close()).catch(() => undefined);
        throw err;
      }
      let where = '';
      try {
        if (toS3) {
          // One chunk is one part: streamed to S3 as it arrives.
          const meter = new PartMeter(expected, { exact: true });
          const [etag] = await Promise.all([this.writer.putPart(stagedFor(row), s3.upload, index + 1, meter, expected), pipeline(body, meter)]).catch((err) => {
            meter.destroy();
            throw err;
          });
          where = s3Part(index + 1, etag);
        } else {
          await this.staging.write(row.id, start, body, expected, { exact: true, file });
        }
      } catch (err) {
        c.stop!();
        await this.repo.release(c.token!);
        if (err instanceof PartTooLong) throw new TooLarge(err.message);
        if (err instanceof PartTooShort) throw new BadRequest(`chunk ${index} must be ${expected} bytes: ${err.message}`);
        if (err instanceof AppError) throw err;
        throw new BadRequest(`the chunk was not received whole: ${(err as Error).message}`);
      }
      c.stop!();
      return (await this.repo.record(row.id, c.token!, [{ upload_id: row.id, start, size: expected, file: where }], Date.now())) ?? (await this.refused(row, 'closed', `chunk ${index}`));
    });
    // Sending a part group to S3 changes where parts are, not the upload's row.
    if (s3 && s3.partSize !== row.chunk_size) await this.sendGroupQuietly(recorded, s3, Math.floor(start / s3.partSize));
    return recorded;
  }

  /**
   * Appends a body at `offset` (tus PATCH). One PATCH at a time writes into an upload (another
   * gets 409); a body cut short keeps what arrived unless a checksum was given.
   */
  async append(view: View, row: UploadRow, offset: number, body: Readable, opts: { checksum?: { algorithm: string; digest: string }; declared?: number } = {}): Promise<UploadRow> {
    // The PATCH is one of the account's transfers, paced by its upload rate (view/meters.ts).
    return view.receive(body, (paced) => this.appendNow(view, row, offset, paced, opts));
  }

  private async appendNow(view: View, row: UploadRow, offset: number, body: Readable, opts: { checksum?: { algorithm: string; digest: string }; declared?: number }): Promise<UploadRow> {
    const { checksum, declared } = opts;
    this.requireReceiving(row);
    decideTarget(view, originOf(row));
    if (offset !== row.received) throw new Conflict(`the upload is at offset ${row.received}, not ${offset}`);
    if (declared !== undefined && tooShort(row, offset, declared)) throw new BadRequest(MSG_SHORT_BODY);
    const c = await this.claim(row, [TUS_CLAIM], { offset, exclusive: true });
    if (!c.token) return this.refused(row, c.why as 'busy' | 'closed', 'the upload');
    let written;
    try {
      written = await this.staging.write(row.id, offset, body, row.size - offset, { partial: true, algorithm: checksum?.algorithm });
      if (checksum && written.digest !== checksum.digest) throw new ChecksumMismatch();
      // Bytes are kept in steps of at least MIN_CHUNK (a body cut short below it is sent again).
      if (tooShort(row, offset, written.bytes)) throw new BadRequest(MSG_SHORT_BODY);
    } catch (err) {
      c.stop!();
      await this.repo.release(c.token);
      if (err instanceof PartTooLong) throw new TooLarge(err.message);
      if (err instanceof AppError) throw err;
      throw new BadRequest(`the body was not received: ${(err as Error).message}`);
    }
    c.stop!();
    const s3 = optionsOf(row).s3;
    // With S3 staging, ranges are recorded cut at part boundaries, so each part's bytes are known.
    const parts: UploadPartRow[] = [];
    for (let at = offset, end = offset + written.bytes; at < end; ) {
      const next = s3 ? Math.min(end, (Math.floor(at / s3.partSize) + 1) * s3.partSize) : end;
      parts.push({ upload_id: row.id, start: at, size: next - at, file: '' });
      at = next;
    }
    const recorded = (await this.repo.record(row.id, c.token, parts, Date.now())) ?? (await this.refused(row, 'closed', 'the upload'));
    if (s3) {
      const whole = Math.floor((offset + written.bytes) / s3.partSize);
      for (let g = Math.floor(offset / s3.partSize); g < whole; g++) await this.sendGroupQuietly(recorded, s3, g);
    }
    return recorded;
  }

  /** The byte range of part group `g`. */
  private groupRange(row: UploadRow, s3: S3Stage, g: number): [number, number] {
    return [g * s3.partSize, Math.min(row.size, (g + 1) * s3.partSize)];
  }

  /**
   * Sends part group `g` from the staging file to S3 when all its bytes are in and some are not
   * yet sent; the group's ranges are claimed meanwhile (a busy group is left for later: the writer
   * holding it, or completion, sends it). Failures are left for completion to retry.
   */
  private async sendGroupQuietly(row: UploadRow, s3: S3Stage, g: number): Promise<void> {
    const [from, to] = this.groupRange(row, s3, g);
    const starts: number[] = [];
    if (row.protocol === 'multipart') for (let at = from; at < to; at += row.chunk_size) starts.push(at);
    const c = await this.claim(row, row.protocol === 'multipart' ? starts : [TUS_CLAIM], { exclusive: row.protocol !== 'multipart' });
    if (!c.token) return;
    try {
      await this.sendGroup(row, s3, g, await this.repo.partsBetween(row.id, from, to));
    } catch (err) {
      this.log.warn({ err, upload: row.id, part: g + 1 }, 'sending a part to S3 failed; completion sends it again');
    } finally {
      c.stop!();
      await this.repo.release(c.token);
    }
  }

  /** Sends group `g` when its ranges are all recorded and some only in the staging file. */
  private async sendGroup(row: UploadRow, s3: S3Stage, g: number, parts: UploadPartRow[]): Promise<void> {
    const [from, to] = this.groupRange(row, s3, g);
    const mine = parts.filter((p) => p.start >= from && p.start < to);
    if (!mine.some((p) => p.file === '') || mine.reduce((n, p) => n + p.size, 0) !== to - from) return;
    const etag = await this.writer.putPart(stagedFor(row), s3.upload, g + 1, this.staging.read(row.id, from, to), to - from);
    await this.repo.relocate(
      row.id,
      mine.map((p) => p.start),
      s3Part(g + 1, etag),
    );
  }

  /**
   * Puts the file together into the storage. One request wins the move to `completing` (a
   * completion left behind by a killed node can be taken over once stale), and only while no
   * request is writing into the upload; chunks missing send the upload back to receiving; a hash
   * mismatch or rules that now say no fail it for good.
   */
  async complete(view: View, row: UploadRow): Promise<UploadRow> {
    if (row.state === 'completed') return row;
    const won = await this.repo.beginCompletion(row.id, row.attempt + 1, Date.now() - STALE_COMPLETION_MS, (c) => claimIsDead(c));
    if (won === 'busy') throw new Conflict('a chunk is still being received; complete again once it is in');
    if (won === 'lost') {
      const now = await this.repo.byId(row.id);
      if (now?.state === 'completed') return now;
      throw new Conflict(`the upload is ${now?.state ?? 'gone'}`);
    }
    const opts = optionsOf(row);
    let parts = await this.repo.parts(row.id);
    const gaps = missing(row, parts);
    if (gaps) {
      await this.repo.transition(row.id, ['completing'], 'receiving');
      throw new BadRequest(`the upload is not complete: ${gaps}`);
    }
    let pct = 0;
    const onProgress = (b: number) => {
      pct = row.size > 0 ? Math.floor((b / row.size) * 100) : 100;
    };
    // The sign of life (and the progress) other processes see: a stale one is taken over.
    const beat = setInterval(() => void this.repo.setProgress(row.id, pct).catch(() => undefined), COMPLETION_BEAT_MS);
    beat.unref();
    try {
      const target = decideTarget(view, originOf(row));
      await this.checkTarget(view, target, opts.overwrite);
      if (opts.s3) {
        const groups = Math.ceil(row.size / opts.s3.partSize);
        for (let g = 0; g < groups; g++) {
          await this.sendGroup(row, opts.s3, g, parts);
          onProgress(this.groupRange(row, opts.s3, g)[1]);
        }
        parts = await this.repo.parts(row.id);
        const sent = new Map<number, string>();
        for (const p of parts) {
          const [, n, etag] = p.file.split(':');
          if (etag) sent.set(Number(n), etag);
        }
        const list = [...sent].sort((a, b) => a[0] - b[0]).map(([n, etag]) => ({ n, etag }));
        await view.finishMultipart(target, opts.s3.upload, list, opts.overwrite);
      } else {
        await this.staging.ensure(row.id);
        await view.putFile(
          target,
          {
            path: this.staging.file(row.id),
            size: row.size,
            modified: opts.modified === undefined ? undefined : new Date(opts.modified),
            mimetype: opts.mimetype,
            hashes: opts.hashes,
            onProgress,
          },
          opts.overwrite,
        );
      }
    } catch (err) {
      // Bytes or a name the storage refused, or rules that now say no, fail the same way again.
      const permanent = isKind(err, 'Integrity', 'BadRequest', 'Forbidden', 'PasswordRequired', 'Hidden', 'Exists');
      const msg = (err as Error).message;
      if (permanent) {
        await this.repo.transition(row.id, ['completing'], 'failed_permanent', { error: msg });
        await this.dropBytes(row);
      } else {
        await this.repo.transition(row.id, ['completing'], 'receiving', { error: msg });
      }
      throw err;
    } finally {
      clearInterval(beat);
    }
    await this.repo.transition(row.id, ['completing'], 'completed', { progress: 100 });
    await this.repo.dropParts(row.id);
    await this.staging.drop(row.id);
    return (await this.repo.byId(row.id))!;
  }

  /** Stops an upload and removes its bytes (OpenList's abort, tus termination). */
  async abort(row: UploadRow): Promise<void> {
    if (row.state === 'completing') throw new Conflict('the upload is being completed');
    await this.repo.delete(row.id);
    await this.dropStaged(row);
  }

  /** The staging file, and the S3 multipart upload with its parts. */
  private async dropStaged(row: UploadRow): Promise<void> {
    await this.staging.drop(row.id);
    const s3 = optionsOf(row).s3;
    if (s3 && row.state !== 'completed') {
      await this.writer.abortMultipart(stagedFor(row), s3.upload).catch((err) => this.log.warn({ err, upload: row.id }, 'aborting the S3 multipart upload failed'));
    }
  }

  private async dropBytes(row: UploadRow): Promise<void> {
    await this.repo.dropParts(row.id);
    await this.dropStaged(row);
  }

  /**
   * Removes uploads with no change for `upload_expire_hours` (their bytes: staging file or S3
   * multipart upload), and staging folders no upload owns. Runs at start and every few minutes on
   * every node; each removal is idempotent, so nodes sweeping together do no harm.
   */
  async sweep(): Promise<number> {
    const ms = this.expiryMs();
    if (ms <= 0) return 0;
    const before = Date.now() - ms;
    let n = 0;
    for (const row of await this.repo.idleSince(before)) {
      if (row.state === 'completing' && row.updated_at > Date.now() - STALE_COMPLETION_MS) continue;
      await this.repo.delete(row.id);
      await this.dropStaged(row);
      n++;
    }
    const known = await this.repo.ids();
    for (const f of await this.staging.folders()) {
      if (!known.has(f.id) && f.mtimeMs < before) {
        await this.staging.drop(f.id);
        n++;
      }
    }
    return n;
  }

  start(): void {
    const run = () =>
      void this.sweep().then(
        (n) => n > 0 && this.log.info({ removed: n }, 'expired uploads removed'),
        (err) => this.log.warn({ err }, 'sweeping expired uploads failed'),
      );
    run();
    this.timer = setInterval(run, SWEEP_EVERY_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}

const MSG_SHORT_BODY = `a PATCH body must hold at least ${MIN_CHUNK} bytes, unless it ends the upload`;
/** A tus body of `bytes` at `offset` that neither holds MIN_CHUNK nor reaches the end. */
const tooShort = (row: UploadRow, offset: number, bytes: number) => bytes < MIN_CHUNK && offset + bytes < row.size;

/** tus's 460: the body does not match its Upload-Checksum. */
export class ChecksumMismatch extends BadRequest {
  constructor() {
    super('checksum mismatch');
  }
}

/** Describes what is missing for the parts to cover [0, size) exactly, or '' when nothing is. */
function missing(row: UploadRow, parts: UploadPartRow[]): string {
  let at = 0;
  for (const p of parts) {
    if (p.start !== at) break;
    at += p.size;
  }
  if (at === row.size) return '';
  if (row.protocol === 'multipart') return `chunk ${Math.floor(at / row.chunk_size)} is missing`;
  return `${row.size - at} bytes from offset ${at} are missing`;
}

/**
 * The chunk indexes received, as inclusive ranges [[first, last], …]: from the ranges kept with
 * the row, or (a row from before they were kept) from its parts.
 */
export async function receivedChunks(repo: Pick<UploadsRepo, 'parts'>, row: UploadRow): Promise<Array<[number, number]>> {
  const ranges = parseRanges(row.ranges) ?? rangesOf(await repo.parts(row.id));
  return chunkIndexRanges(ranges, row.chunk_size);
}
