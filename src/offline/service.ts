import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readdir, rm, rmdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { BadRequest, isKind, Missing, Unavailable, Unsupported, Upstream } from '../errors.js';
import type { Fs } from '../fs/fs.js';
import { STATUS_WORK } from '../fs/storages.js';
import type { FsWriter } from '../fs/write.js';
import type { Logger } from '../logger.js';
import type { Settings } from '../settings/service.js';
import { type Task, type TaskContext, type TaskCreator, type TaskManager } from '../tasks/manager.js';
import { cleanPath } from '../util/paths.js';
import { FinalTaskError, refuseOne, refuseUnsafeName } from '../tasks/creator.js';
import { downloadName, downloadToDir, httpError, openUrl, type PartialDownload, SIMPLE_HTTP, SizeLimit } from './simple-http.js';
import { type OfflineTool, type OfflineTools, UnknownDownload } from './tool.js';
import { resolveTarget } from '../net/url-guard.js';

/** `delete_policy` values of wire-api.md §13.3: when the downloaded temp file is deleted. */
export const DELETE_POLICIES = ['delete_on_upload_succeed', 'delete_on_upload_failed', 'delete_never', 'delete_always', 'upload_download_stream'] as const;
export type DeletePolicy = (typeof DELETE_POLICIES)[number];

/** Status errors in a row after which a download fails. */
const MAX_STATUS_ERRORS = 5;
/** Times one attempt adds a download again after the tool forgot it. */
const MAX_READDS = 3;
/** Schemes the torrent-capable tools take besides http(s); they name no host, so nothing to guard. */
const TORRENT_SCHEMES = ['magnet:'];

interface DownloadPayload {
  url: string;
  tool: string;
  /** Destination folder (virtual path). */
  dstDir: string;
  /** This download's own folder under the temp dir (see TEMP_OWNED_BY_PAYLOAD). */
  temp: string;
  deletePolicy: DeletePolicy;
  creator: TaskCreator;
  /** The tool's handle (gid, tag, hash) once added. */
  handle?: string;
  /** SimpleHttp: the file being written, to continue it after a restart. */
  partial?: PartialDownload;
}

interface TransferPayload {
  /** Absolute path of the downloaded file. */
  file: string;
  /** The download's temp folder the file lies in (relative folders below it are kept). */
  temp: string;
  dstDir: string;
  deletePolicy: DeletePolicy;
}

export interface AddRequest {
  urls: string[];
  /** Destination folder (virtual path, base path already joined). */
  dstDir: string;
  tool: string;
  deletePolicy: string;
  creator: TaskCreator;
}

export interface OfflineOptions {
  /** How often an external tool is asked where a download stands. */
  pollMs?: number;
  /** How long qBittorrent may take to list a torrent added from a URL. */
  qbittorrentAppearMs?: number;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });

/**
 * Offline downloads (wire-api.md §13): a `offline_download` task fetches URLs into its own
 * folder under `<temp_dir>/<tool>/`, with SimpleHttp (Atrium's own downloader) or an external
 * tool; when done, every file found there becomes an `offline_download_transfer` task that
 * puts it into the destination storage, then the delete policy decides about the temp file.
 */
export class OfflineDownloads {
  private readonly pollMs: number;

  constructor(
    private readonly tasks: TaskManager,
    private readonly fs: Fs,
    private readonly writer: FsWriter,
    private readonly settings: Settings,
    private readonly tools: OfflineTools,
    private readonly tempRoot: string,
    private readonly log: Logger,
    opts: OfflineOptions = {},
  ) {
    this.pollMs = opts.pollMs ?? 3000;
    tasks.registerResumer('offline_download', (p) => (ctx) => this.download(p as DownloadPayload, ctx));
    tasks.registerResumer('offline_download_transfer', (p) => (ctx) => this.transfer(p as TransferPayload, ctx));
  }

  /** Folders of temp_dir that hold downloads (one per tool). */
  tempFolders(): string[] {
    return this.toolNames().map((t) => path.join(this.tempRoot, t));
  }

  /** Tool names for `/api/public/offline_download_tools`. */
  toolNames(): string[] {
    return [SIMPLE_HTTP, ...this.tools.names()];
  }

  private get allowPrivate(): boolean {
    return this.settings.getBool('offline_download_allow_private');
  }

  private get maxBytes(): number {
    return Math.max(0, this.settings.getNumber('offline_download_max_size', 0)) * 1024 * 1024;
  }

  /** Connects to a tool with the current settings (the `set_*` routes); returns its version. */
  async initTool(name: string): Promise<string> {
    name = this.canonicalTool(name);
    const tool = this.tools.get(name);
    if (!tool) throw new BadRequest(`tool ${name} not found`);
    try {
      return await tool.init(this.settings);
    } catch (err) {
      throw new Upstream(`failed init tool ${name}: ${(err as Error).message}`);
    }
  }

  /** The tool's own spelling of a name given in any case (AList says `transmission`, OpenList `Transmission`). */
  private canonicalTool(name: string): string {
    return this.toolNames().find((t) => t.toLowerCase() === name.toLowerCase()) ?? name;
  }

  async add(input: AddRequest): Promise<Task[]> {
    const req = { ...input, tool: this.canonicalTool(input.tool) };
    const policy = (req.deletePolicy || 'delete_on_upload_succeed') as DeletePolicy;
    if (!DELETE_POLICIES.includes(policy)) throw new BadRequest(`unknown delete_policy ${req.deletePolicy}; one of ${DELETE_POLICIES.join(', ')}`);
    if (req.tool !== SIMPLE_HTTP && !this.tools.get(req.tool)) throw new BadRequest(`tool ${req.tool} not found`);
    if (policy === 'upload_download_stream' && req.tool !== SIMPLE_HTTP) throw new BadRequest(`delete_policy upload_download_stream needs the ${SIMPLE_HTTP} tool`);
    const urls = req.urls.map((u) => u.trim()).filter(Boolean);
    if (urls.length === 0) throw new BadRequest('urls is empty');
    const dstDir = cleanPath(req.dstDir);
    await this.checkDestination(dstDir);
    const extraSchemes = req.tool === SIMPLE_HTTP ? [] : TORRENT_SCHEMES;
    for (const url of urls) await resolveTarget(url, { allowPrivate: this.allowPrivate, extraSchemes });
    if (req.tool !== SIMPLE_HTTP) await this.initTool(req.tool);
    return Promise.all(urls.map((url) => {
      const payload: DownloadPayload = {
        url,
        tool: req.tool,
        dstDir,
        temp: path.join(this.tempRoot, req.tool, randomUUID()),
        deletePolicy: policy,
        creator: req.creator,
      };
      return this.tasks.submitStored({
        kind: 'offline_download',
        name: `download ${url} to (${dstDir})`,
        creator: req.creator,
        payload,
        run: (ctx) => this.download(payload, ctx),
      });
    }));
  }

  private async checkDestination(dstDir: string): Promise<void> {
    await this.fs.storages.ready(dstDir);
    const { storage, actualPath } = this.fs.resolveStorage(dstDir);
    if (storage.row.status !== STATUS_WORK || !storage.driver) throw new Unavailable(`storage not init: ${storage.row.status}`);
    if (storage.factory.config.noUpload || !storage.driver.put) throw new Unsupported('upload not supported');
    let obj;
    try {
      obj = await storage.driver.get(actualPath);
    } catch (err) {
      if (!isKind(err, 'NotFound')) throw err;
      return;
    }
    if (!obj.isDir) throw new Missing('not a folder');
  }

  private async download(p: DownloadPayload, ctx: TaskContext): Promise<void> {
    try {
      if (p.tool === SIMPLE_HTTP && p.deletePolicy === 'upload_download_stream') {
        await this.streamToDestination(p, ctx);
        return;
      }
      await mkdir(p.temp, { recursive: true });
      if (p.tool === SIMPLE_HTTP) await this.simpleHttp(p, ctx);
      else await this.withTool(this.tools.get(p.tool)!, p, ctx);
    } catch (err) {
      // A retry continues from what is in the temp folder; after the last attempt it goes.
      if (ctx.signal.aborted || ctx.lastAttempt || err instanceof FinalTaskError) await rm(p.temp, { recursive: true, force: true });
      throw err;
    }
    ctx.setStatus('offline download completed, maybe transferring');
    await this.spawnTransfers(p);
  }

  private async simpleHttp(p: DownloadPayload, ctx: TaskContext): Promise<void> {
    ctx.setStatus(`[${SIMPLE_HTTP}]: downloading`);
    await downloadToDir({
      url: p.url,
      dir: p.temp,
      allowPrivate: this.allowPrivate,
      maxBytes: this.maxBytes,
      signal: ctx.signal,
      partial: p.partial,
      onStart: async (partial) => {
        // Decided before any byte is fetched, as a direct upload of the name (and again at the transfer).
        const rules = await ctx.rules();
        refuseOne(partial.name, () => rules.checkPut(path.posix.join(p.dstDir, partial.name)));
        p.partial = partial;
        await ctx.savePayload(p);
      },
      onProgress: (bytes, total) => {
        if (total > 0) {
          ctx.setTotalBytes(total);
          ctx.setProgress((bytes / total) * 100);
        }
      },
    });
  }

  /** `upload_download_stream`: no temp file; the response body goes straight into the destination. */
  private async streamToDestination(p: DownloadPayload, ctx: TaskContext): Promise<void> {
    ctx.setStatus(`[${SIMPLE_HTTP}]: downloading`);
    const { res, url } = await openUrl(p.url, { allowPrivate: this.allowPrivate, signal: ctx.signal });
    if (res.statusCode !== 200) throw httpError(res, url);
    const size = Number(res.headers['content-length'] ?? -1);
    const max = this.maxBytes;
    if (max > 0 && size > max) {
      res.resume();
      throw new Error(`the download is ${size} bytes, more than the limit of ${max} bytes (setting offline_download_max_size)`);
    }
    if (size > 0) ctx.setTotalBytes(size);
    const name = downloadName(res, url);
    try {
      refuseUnsafeName(name);
      const rules = await ctx.rules();
      refuseOne(name, () => rules.checkPut(path.posix.join(p.dstDir, name)));
    } catch (err) {
      res.resume();
      throw err;
    }
    const counted = res.pipe(new SizeLimit(max, (b) => size > 0 && ctx.setProgress((b / size) * 100)));
    res.on('error', (err) => counted.destroy(err));
    await this.writer.put(path.posix.join(p.dstDir, name), { name, size, stream: counted, signal: ctx.signal }, { overwrite: true });
  }

  /** Hands the URL to an external tool, then follows it until it is complete. */
  private async withTool(tool: OfflineTool, p: DownloadPayload, ctx: TaskContext): Promise<void> {
    const label = `[${tool.name}]`;
    await tool.init(this.settings);
    const start = async () => {
      ctx.setStatus(`${label}: adding`);
      p.handle = await tool.add(p.url, p.temp, ctx.signal);
      await ctx.savePayload(p);
    };
    if (!p.handle) await start();
    let errors = 0;
    let readds = 0;
    try {
      for (;;) {
        let st;
        try {
          st = await tool.status(p.handle!);
          errors = 0;
        } catch (err) {
          if (err instanceof UnknownDownload) {
            // The tool lost it (restarted, or Atrium did): added again into the same folder.
            if (++readds > MAX_READDS) throw new Error(`${label}: the download vanished from ${tool.name} ${MAX_READDS} times`);
            await start();
            continue;
          }
          if (++errors > MAX_STATUS_ERRORS) throw new Error(`${label}: ${(err as Error).message}`);
          this.log.warn({ err, tool: tool.name }, 'offline download status failed');
          await sleep(this.pollMs, ctx.signal);
          continue;
        }
        if (st.totalBytes > 0) ctx.setTotalBytes(st.totalBytes);
        ctx.setProgress(st.progress);
        ctx.setStatus(`${label}: ${st.status}`);
        if (st.error) throw new Error(`${label}: ${st.error}`);
        const max = this.maxBytes;
        if (max > 0 && st.totalBytes > max) throw new Error(`the download is ${st.totalBytes} bytes, more than the limit of ${max} bytes (setting offline_download_max_size)`);
        if (st.completed) {
          await this.seed(tool, st.seeding ?? false, ctx);
          break;
        }
        await sleep(this.pollMs, ctx.signal);
      }
    } finally {
      if (p.handle) await tool.remove(p.handle).catch((err) => this.log.warn({ err, tool: tool.name }, 'removing a download from the tool failed'));
    }
  }

  /** Torrents stay with their client for `<tool>_seedtime` minutes after completion. */
  private async seed(tool: OfflineTool, seeding: boolean, ctx: TaskContext): Promise<void> {
    const key = tool.settingKeys.find((k) => k.endsWith('_seedtime'));
    const minutes = key ? this.settings.getNumber(key, 0) : 0;
    if (!seeding || minutes <= 0) return;
    ctx.setStatus('offline download completed, waiting for seeding');
    await sleep(minutes * 60_000, ctx.signal);
  }

  /** One transfer task per file found under the download's temp folder. */
  private async spawnTransfers(p: DownloadPayload): Promise<void> {
    const files: string[] = [];
    const walk = async (dir: string) => {
      for (const e of await readdir(dir, { withFileTypes: true })) {
        const full = path.join(dir, e.name);
        if (e.isDirectory()) await walk(full);
        else if (e.isFile()) files.push(full);
      }
    };
    await walk(p.temp);
    if (files.length === 0) throw new Error('the download finished without any file');
    for (const file of files) {
      const payload: TransferPayload = { file, temp: p.temp, dstDir: p.dstDir, deletePolicy: p.deletePolicy };
      this.tasks.submit({
        kind: 'offline_download_transfer',
        name: `transfer ${file} to [${p.dstDir}]`,
        creator: p.creator,
        payload,
        run: (ctx) => this.transfer(payload, ctx),
      });
    }
  }

  private async transfer(p: TransferPayload, ctx: TaskContext): Promise<void> {
    ctx.setStatus('transferring');
    const rel = path.relative(p.temp, path.dirname(p.file)).split(path.sep).filter(Boolean);
    const dir = cleanPath(path.posix.join(p.dstDir, ...rel));
    const name = path.basename(p.file);
    try {
      const { size, mtime } = await stat(p.file);
      ctx.setTotalBytes(size);
      // The name decided as a direct upload of it, on the creator's account as it is now.
      const rules = await ctx.rules();
      refuseOne(path.posix.join(...rel, name), () => rules.checkPut(path.posix.join(dir, name)));
      await this.writer.put(
        path.posix.join(dir, name),
        {
          name,
          size,
          modified: mtime,
          stream: createReadStream(p.file),
          signal: ctx.signal,
          onProgress: (b) => ctx.setProgress(size > 0 ? (b / size) * 100 : 100),
        },
        { overwrite: true },
      );
    } catch (err) {
      const final = ctx.lastAttempt || err instanceof FinalTaskError;
      if (final && (p.deletePolicy === 'delete_on_upload_failed' || p.deletePolicy === 'delete_always')) await this.dropTempFile(p);
      throw err;
    }
    if (p.deletePolicy === 'delete_on_upload_succeed' || p.deletePolicy === 'delete_always') await this.dropTempFile(p);
  }

  /** Deletes a transferred file and the folders it leaves empty, up to the download's temp folder. */
  private async dropTempFile(p: TransferPayload): Promise<void> {
    await rm(p.file, { force: true });
    let dir = path.dirname(p.file);
    const stop = path.dirname(p.temp);
    while (dir.startsWith(p.temp) && dir !== stop) {
      try {
        await rmdir(dir);
      } catch {
        return;
      }
      dir = path.dirname(dir);
    }
  }
}
