import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { UploadPartRow, UploadRow, UploadsRepo } from '../db/uploads.js';
import { UploadIntegrityError } from '../drivers/types.js';
import { BadRequest, Conflict, Exists, Forbidden, isKind, KindError, NotFound, TooLarge, TooManyRequests } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Settings } from '../settings/service.js';
import type { View } from '../view/view.js';
import { PartTooLong, Staging } from './staging.js';

export const SETTING = {
  enabled: 'multipart_enabled',
  chunkMb: 'multipart_chunk_size',
  expireHours: 'upload_expire_hours',
  maxParallel: 'upload_max_parallel',
} as const;

export const MSG_DISABLED = 'multipart upload is disabled';
const MIN_CHUNK = 1;
const MAX_CHUNK = 5 * 1024 * 1024 * 1024;
/** A completion that has not reported progress for this long was cut off (a killed node). */
const STALE_COMPLETION_MS = 60_000;
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
}

export interface CreateInput extends UploadOptions {
  protocol: Protocol;
  /** Virtual path of the file. */
  target: string;
  size: number;
  chunkSize?: number;
}

export const optionsOf = (row: UploadRow): UploadOptions => JSON.parse(row.options) as UploadOptions;
export const totalChunks = (row: Pick<UploadRow, 'size' | 'chunk_size'>): number => (row.size === 0 ? 0 : Math.ceil(row.size / row.chunk_size));

/**
 * Resumable uploads, shared by OpenList's multipart routes and the tus endpoint: the state lives
 * in the database (so any node, and a restarted one, continues an upload), the bytes in a staging
 * folder of temp_dir, one file per part. The file appears under its name only when every byte is
 * there: completion streams the parts into the storage's put, which writes a temporary name,
 * checks size and declared hashes, and renames it into place. The per-user view decides at
 * creation and again at completion.
 */
export class Uploads {
  readonly staging: Staging;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly repo: UploadsRepo,
    private readonly settings: Settings,
    tempDir: string,
    private readonly log: Logger,
  ) {
    this.staging = new Staging(tempDir);
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

  /** Starts an upload, or (OpenList's init) resumes the caller's unfinished one to the same path and size. */
  async create(view: View, input: CreateInput, resume = false): Promise<{ row: UploadRow; resumed: boolean }> {
    if (!Number.isSafeInteger(input.size) || input.size < 0) throw new BadRequest('the file size is not a size');
    const chunkSize = input.chunkSize ?? this.defaultChunkSize();
    if (!Number.isSafeInteger(chunkSize) || chunkSize < MIN_CHUNK || chunkSize > MAX_CHUNK) throw new BadRequest(`the chunk size must be between ${MIN_CHUNK} and ${MAX_CHUNK} bytes`);
    await this.checkTarget(view, input.target, input.overwrite);
    if (resume) {
      const open = await this.repo.receivingTo(view.user.id, input.protocol, input.target, input.size);
      if (open && open.chunk_size === chunkSize) return { row: open, resumed: true };
    }
    const max = this.settings.getNumber(SETTING.maxParallel, 0);
    if (max > 0 && (await this.repo.countReceiving(view.user.id)) >= max) {
      throw new TooManyRequests(`too many unfinished uploads (at most ${max}); complete or abort one first`);
    }
    const now = Date.now();
    const { protocol, target, size, chunkSize: _c, ...options } = input;
    const row: UploadRow = {
      id: randomBytes(16).toString('hex'),
      user_id: view.user.id,
      protocol,
      path: target,
      size,
      chunk_size: chunkSize,
      received: 0,
      state: 'receiving',
      attempt: 0,
      progress: 0,
      error: '',
      options: JSON.stringify(options),
      created_at: now,
      updated_at: now,
    };
    await this.repo.create(row);
    return { row, resumed: false };
  }

  /** The caller's upload; another user's is as missing as an unknown id. */
  async get(view: View, id: string): Promise<UploadRow> {
    const row = /^[0-9a-f]{32}$/.test(id) ? await this.repo.byId(id) : undefined;
    if (!row || row.user_id !== view.user.id) throw new NotFound('upload not found');
    if (row.state === 'receiving' && this.expired(row)) throw new KindError('NotFound', 'upload expired', 404);
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

  async parts(row: UploadRow): Promise<UploadPartRow[]> {
    return this.repo.parts(row.id);
  }

  private requireReceiving(row: UploadRow): void {
    if (row.state === 'completing') throw new Conflict('the upload is being completed');
    if (row.state !== 'receiving') throw new Conflict(`the upload is ${row.state}`);
  }

  /** Stores chunk `index` (OpenList's chunk route); sending a chunk again replaces it whole. */
  async putChunk(row: UploadRow, index: number, body: Readable, declared?: number): Promise<UploadRow> {
    this.requireReceiving(row);
    const total = totalChunks(row);
    if (!Number.isSafeInteger(index) || index < 0 || index >= total) throw new BadRequest(`X-Chunk-Index must be between 0 and ${total - 1}`);
    const start = index * row.chunk_size;
    const expected = Math.min(row.chunk_size, row.size - start);
    if (declared !== undefined && declared !== expected) throw new BadRequest(`chunk ${index} must be ${expected} bytes, not ${declared}`);
    const written = await this.staging.write(row.id, start, body, expected).catch((err) => {
      throw err instanceof PartTooLong ? new TooLarge(err.message) : new BadRequest(`the chunk was not received whole: ${(err as Error).message}`);
    });
    if (written.bytes !== expected) {
      await this.staging.removePart(row.id, written.file);
      throw new BadRequest(`chunk ${index} must be ${expected} bytes, got ${written.bytes}`);
    }
    const replaced = await this.repo.putChunk(row.id, { upload_id: row.id, start, size: expected, file: written.file }, Date.now());
    if (replaced === undefined) {
      await this.staging.removePart(row.id, written.file);
      const now = await this.repo.byId(row.id);
      throw new Conflict(`the upload is ${now?.state ?? 'gone'}`);
    }
    if (replaced) await this.staging.removePart(row.id, replaced);
    return (await this.repo.byId(row.id))!;
  }

  /**
   * Appends a body at `offset` (tus PATCH). Only the request that finds the upload at that offset
   * when it finishes is recorded; a body cut short keeps what arrived unless a checksum was given.
   */
  async append(row: UploadRow, offset: number, body: Readable, checksum?: { algorithm: string; digest: string }): Promise<UploadRow> {
    this.requireReceiving(row);
    if (offset !== row.received) throw new Conflict(`the upload is at offset ${row.received}, not ${offset}`);
    const written = await this.staging.write(row.id, offset, body, row.size - offset, { partial: true, algorithm: checksum?.algorithm }).catch((err) => {
      throw err instanceof PartTooLong ? new TooLarge(err.message) : new BadRequest(`the body was not received: ${(err as Error).message}`);
    });
    if (checksum && written.digest !== checksum.digest) {
      await this.staging.removePart(row.id, written.file);
      throw new ChecksumMismatch();
    }
    if (written.bytes === 0) {
      await this.staging.removePart(row.id, written.file);
      return (await this.repo.byId(row.id))!;
    }
    const ok = await this.repo.appendAt(row.id, offset, { upload_id: row.id, start: offset, size: written.bytes, file: written.file }, Date.now());
    if (!ok) {
      await this.staging.removePart(row.id, written.file);
      throw new Conflict('another request moved the upload on first');
    }
    return (await this.repo.byId(row.id))!;
  }

  /**
   * Puts the file together into the storage. One request wins the move to `completing` (a
   * completion left behind by a killed node can be taken over once stale); chunks missing send the
   * upload back to receiving; a hash mismatch fails it for good.
   */
  async complete(view: View, row: UploadRow): Promise<UploadRow> {
    if (row.state === 'completed') return row;
    const won = await this.repo.transition(row.id, ['receiving', 'completing'], 'completing', { attempt: row.attempt + 1, error: '', progress: 0 }, Date.now() - STALE_COMPLETION_MS);
    if (!won) {
      const now = await this.repo.byId(row.id);
      if (now?.state === 'completed') return now;
      throw new Conflict(`the upload is ${now?.state ?? 'gone'}`);
    }
    const opts = optionsOf(row);
    const parts = await this.repo.parts(row.id);
    const gaps = missing(row, parts);
    if (gaps) {
      await this.repo.transition(row.id, ['completing'], 'receiving');
      throw new BadRequest(`the upload is not complete: ${gaps}`);
    }
    try {
      await this.checkTarget(view, row.path, opts.overwrite);
      let last = 0;
      await view.put(
        row.path,
        {
          name: path.posix.basename(row.path),
          size: row.size,
          stream: this.staging.read(
            row.id,
            parts.map((p) => p.file),
          ),
          modified: opts.modified === undefined ? undefined : new Date(opts.modified),
          mimetype: opts.mimetype,
          hashes: opts.hashes,
          onProgress: (b) => {
            const now = Date.now();
            if (now - last < 2000) return;
            last = now;
            void this.repo.setProgress(row.id, row.size > 0 ? Math.floor((b / row.size) * 100) : 100).catch(() => undefined);
          },
        },
        opts.overwrite,
      );
    } catch (err) {
      // Bytes or a name the storage refused, or rules that now say no, fail the same way again.
      const permanent = err instanceof UploadIntegrityError || isKind(err, 'BadRequest', 'Forbidden', 'PasswordRequired', 'Hidden', 'Exists');
      const msg = (err as Error).message;
      if (permanent) {
        await this.repo.transition(row.id, ['completing'], 'failed_permanent', { error: msg });
        await this.dropBytes(row.id);
      } else {
        await this.repo.transition(row.id, ['completing'], 'receiving', { error: msg });
      }
      throw err;
    }
    await this.repo.transition(row.id, ['completing'], 'completed', { progress: 100 });
    await this.dropBytes(row.id);
    return (await this.repo.byId(row.id))!;
  }

  /** Stops an upload and removes its bytes (OpenList's abort, tus termination). */
  async abort(row: UploadRow): Promise<void> {
    if (row.state === 'completing') throw new Conflict('the upload is being completed');
    await this.repo.delete(row.id);
    await this.staging.drop(row.id);
  }

  private async dropBytes(id: string): Promise<void> {
    await this.repo.dropParts(id);
    await this.staging.drop(id);
  }

  /**
   * Removes uploads with no change for `upload_expire_hours` (their parts and staging folder),
   * and staging folders no upload owns. Runs at start and every few minutes on every node; each
   * removal is idempotent, so nodes sweeping together do no harm.
   */
  async sweep(): Promise<number> {
    const ms = this.expiryMs();
    if (ms <= 0) return 0;
    const before = Date.now() - ms;
    let n = 0;
    for (const row of await this.repo.idleSince(before)) {
      if (row.state === 'completing' && row.updated_at > Date.now() - STALE_COMPLETION_MS) continue;
      await this.repo.delete(row.id);
      await this.staging.drop(row.id);
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

/** Chunk indexes received, as inclusive ranges [[first, last], …]. */
export function receivedRanges(row: UploadRow, parts: UploadPartRow[]): number[][] {
  const out: number[][] = [];
  for (const p of parts) {
    const i = Math.floor(p.start / row.chunk_size);
    const last = out[out.length - 1];
    if (last && last[1] === i - 1) last[1] = i;
    else out.push([i, i]);
  }
  return out;
}
