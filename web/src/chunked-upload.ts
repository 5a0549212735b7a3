// Uploads a large file in chunks through OpenList's multipart routes (docs/uploads.md): init
// (which answers the unfinished upload of the same file, so choosing the file again after a page
// reload continues it), the missing chunks in ascending order, three in flight (as OpenList's web
// front end sends them: a chunk's turn between its answer and the next request overlaps the other
// chunks' bytes), with progress, then complete. Pausing aborts the chunks in flight; resuming asks
// the server what it holds and goes on.
import { ApiError, encodePath, type UploadHandle, type UploadSnapshot, xhrApi } from './api';

export interface ChunkedHandle extends UploadHandle {
  pause(): void;
  resume(): void;
}

/** One multipart route; `xhr` is the request to abort (a chunk in flight) when pausing. */
const send = <T = unknown>(method: string, route: string, hdrs: Record<string, string>, body: Blob | null, onProgress?: (n: number) => void, xhr = new XMLHttpRequest()) =>
  xhrApi<T>(xhr, method, `/fs/multipart/${route}`, hdrs, body, onProgress);

/** Chunks sent at a time (OpenList's web front end sends three). */
const CHUNKS_IN_FLIGHT = 3;

const held = (s: UploadSnapshot) => new Set(s.received.flatMap(([a, b]) => Array.from({ length: b! - a! + 1 }, (_, i) => a! + i)));

export function uploadInChunks(
  file: File,
  target: string,
  opts: { overwrite: boolean; password?: string; chunkSize: number },
  onProgress: (loaded: number) => void,
  onPaused: (paused: boolean) => void,
): ChunkedHandle {
  const inflight = new Set<XMLHttpRequest>();
  let paused = false;
  let canceled = false;
  let wake: (() => void) | undefined;
  let uploadId = '';
  const pw: Record<string, string> = opts.password ? { Password: opts.password } : {};

  /** Sends the chunks `todo` holds, CHUNKS_IN_FLIGHT at a time, until all are sent or a pause; the first error (but a pause's aborts) ends it. */
  const sendChunks = async (snap: UploadSnapshot, todo: number[]) => {
    let done = snap.received_bytes;
    const loading = new Map<number, number>();
    const report = () => onProgress(done + [...loading.values()].reduce((a, b) => a + b, 0));
    report();
    let next = 0;
    let failed: unknown;
    const worker = async () => {
      while (!paused && failed === undefined && next < todo.length) {
        const i = todo[next++]!;
        const blob = file.slice(i * snap.chunk_size, Math.min(file.size, (i + 1) * snap.chunk_size));
        const xhr = new XMLHttpRequest();
        inflight.add(xhr);
        try {
          await send('PUT', 'chunk', { 'X-Upload-Id': uploadId, 'X-Chunk-Index': String(i) }, blob, (n) => {
            loading.set(i, n);
            report();
          }, xhr);
          done += blob.size;
        } catch (e) {
          if (!(paused && !canceled && (e as ApiError).code === -1)) failed ??= e;
          // The other chunks in flight are not waited for once one failed.
          if (failed !== undefined) for (const x of inflight) if (x !== xhr) x.abort();
        } finally {
          inflight.delete(xhr);
          loading.delete(i);
          report();
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(CHUNKS_IN_FLIGHT, todo.length) }, worker));
    if (failed !== undefined) throw failed;
  };

  const run = async () => {
    const init = await send<UploadSnapshot>(
      'POST',
      'init',
      { ...pw, 'File-Path': encodePath(target), 'X-File-Size': String(file.size), 'X-Chunk-Size': String(opts.chunkSize), Overwrite: String(opts.overwrite), 'Last-Modified': String(file.lastModified), 'Content-Type': file.type || 'application/octet-stream' },
      null,
    );
    uploadId = init.upload_id;
    let snap = init;
    for (;;) {
      const have = held(snap);
      await sendChunks(
        snap,
        Array.from({ length: snap.total_chunks }, (_, i) => i).filter((i) => !have.has(i)),
      );
      if (canceled) throw new ApiError(-1, 'canceled');
      if (!paused) break;
      onPaused(true);
      await new Promise<void>((r) => (wake = r));
      if (canceled) throw new ApiError(-1, 'canceled');
      onPaused(false);
      snap = await send<UploadSnapshot>('GET', `status?upload_id=${uploadId}`, pw, null);
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
      for (const x of inflight) x.abort();
      wake?.();
    },
    pause: () => {
      paused = true;
      for (const x of inflight) x.abort();
    },
    resume: () => {
      paused = false;
      wake?.();
    },
  };
}
