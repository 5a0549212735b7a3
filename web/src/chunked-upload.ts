// Uploads a large file in chunks through OpenList's multipart routes (docs/uploads.md): init
// (which answers the unfinished upload of the same file, so choosing the file again after a page
// reload continues it), the missing chunks one after the other with progress, then complete.
// Pausing aborts the chunk in flight; resuming asks the server what it holds and goes on.
import { ApiError, encodePath, type UploadHandle, xhrApi } from './api';

interface Snapshot {
  upload_id: string;
  state: string;
  chunk_size: number;
  total_chunks: number;
  received: number[][];
  received_bytes: number;
}

export interface ChunkedHandle extends UploadHandle {
  pause(): void;
  resume(): void;
}

/** One multipart route; `xhr` is the request to abort (the chunk in flight) when pausing. */
const send = <T = unknown>(method: string, route: string, hdrs: Record<string, string>, body: Blob | null, onProgress?: (n: number) => void, xhr = new XMLHttpRequest()) =>
  xhrApi<T>(xhr, method, `/fs/multipart/${route}`, hdrs, body, onProgress);

const held = (s: Snapshot) => new Set(s.received.flatMap(([a, b]) => Array.from({ length: b! - a! + 1 }, (_, i) => a! + i)));

export function uploadInChunks(
  file: File,
  target: string,
  opts: { overwrite: boolean; password?: string; chunkSize: number },
  onProgress: (loaded: number) => void,
  onPaused: (paused: boolean) => void,
): ChunkedHandle {
  let xhr: XMLHttpRequest | undefined;
  let paused = false;
  let canceled = false;
  let wake: (() => void) | undefined;
  let uploadId = '';
  const pw: Record<string, string> = opts.password ? { Password: opts.password } : {};

  const run = async () => {
    const init = await send<Snapshot>(
      'POST',
      'init',
      { ...pw, 'File-Path': encodePath(target), 'X-File-Size': String(file.size), 'X-Chunk-Size': String(opts.chunkSize), Overwrite: String(opts.overwrite), 'Last-Modified': String(file.lastModified), 'Content-Type': file.type || 'application/octet-stream' },
      null,
    );
    uploadId = init.upload_id;
    let snap = init;
    for (;;) {
      const have = held(snap);
      let done = snap.received_bytes;
      onProgress(done);
      for (let i = 0; i < snap.total_chunks && !paused; i++) {
        if (have.has(i)) continue;
        const blob = file.slice(i * snap.chunk_size, Math.min(file.size, (i + 1) * snap.chunk_size));
        try {
          await send('PUT', 'chunk', { 'X-Upload-Id': uploadId, 'X-Chunk-Index': String(i) }, blob, (n) => onProgress(done + n), (xhr = new XMLHttpRequest()));
        } catch (e) {
          if (paused && !canceled && (e as ApiError).code === -1) break;
          throw e;
        }
        done += blob.size;
      }
      if (canceled) throw new ApiError(-1, 'canceled');
      if (!paused) break;
      onPaused(true);
      await new Promise<void>((r) => (wake = r));
      if (canceled) throw new ApiError(-1, 'canceled');
      onPaused(false);
      snap = await send<Snapshot>('GET', `status?upload_id=${uploadId}`, pw, null);
    }
    return send('POST', 'complete', { ...pw, 'X-Upload-Id': uploadId }, null);
  };

  const promise = run().catch(async (e: ApiError) => {
    if (e.code === -1 && uploadId) await send('POST', 'abort', { 'X-Upload-Id': uploadId }, null).catch(() => undefined);
    throw e;
  });
  return {
    promise,
    abort: () => {
      canceled = true;
      paused = true;
      xhr?.abort();
      wake?.();
    },
    pause: () => {
      paused = true;
      xhr?.abort();
    },
    resume: () => {
      paused = false;
      wake?.();
    },
  };
}
