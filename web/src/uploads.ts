// The upload queue: a few files at a time through PUT /api/fs/put, each with its progress,
// cancellable, the listing refreshed as files land. Files larger than the server's chunk size go
// in chunks (chunked-upload.ts) and can be paused and resumed.
import { createStore, produce } from 'solid-js/store';
import { api, ApiError, joinPath, type ListResp, uploadFile, type UploadHandle } from './api';
import { uploadInChunks, type ChunkedHandle } from './chunked-upload';
import { askReplace, type ReplaceChoice } from './components/replaceDialog';
import { RateMeter, timeLeft } from './rate';
import { passwordFor, settings } from './state';

const PARALLEL = 3;

export interface UploadItem {
  id: number;
  name: string;
  target: string;
  size: number;
  loaded: number;
  status: 'queued' | 'checking' | 'uploading' | 'paused' | 'done' | 'failed' | 'canceled' | 'skipped';
  /** Sent in chunks: can be paused. */
  chunked?: boolean;
  error?: string;
  /** Bytes per second while uploading. */
  speed: number;
}

export const [uploads, setUploads] = createStore<{ items: UploadItem[]; asTask: boolean; overwrite: boolean }>({
  items: [],
  asTask: false,
  // as OpenList: an upload never replaces a file unless asked to (see confirmReplace)
  overwrite: false,
});

const files = new Map<number, File>();
const handles = new Map<number, UploadHandle | ChunkedHandle>();
const meters = new Map<number, RateMeter>();

/** The chunk size the server asks for, when chunked uploads are on (public settings). */
function chunkSize(): number | undefined {
  const s = settings();
  if (s.multipart_enabled !== 'true') return undefined;
  const mb = Number(s.multipart_chunk_size);
  return Number.isFinite(mb) && mb > 0 ? mb * 1024 * 1024 : undefined;
}
let nextId = 1;
const landed = new Set<(dir: string) => void>();
/** Called with the destination folder whenever a file finished uploading. */
export function onUploaded(fn: (dir: string) => void): () => void {
  landed.add(fn);
  return () => landed.delete(fn);
}

/** Queues files; relPath may contain folders ("photos/2024/a.jpg") for folder uploads. */
export function enqueue(entries: Array<{ file: File; relPath: string }>, dir: string): void {
  setUploads(
    produce((s) => {
      for (const { file, relPath } of entries) {
        const id = nextId++;
        files.set(id, file);
        s.items.push({ id, name: relPath, target: joinPath(dir, relPath), size: file.size, loaded: 0, status: 'queued', speed: 0 });
      }
    }),
  );
  pump();
}

function pump(): void {
  const running = uploads.items.filter((i) => i.status === 'uploading' || i.status === 'checking').length;
  if (running === 0 && !uploads.items.some((i) => i.status === 'queued')) {
    batchChoice = undefined;
    namesByDir.clear();
  }
  const next = uploads.items.filter((i) => i.status === 'queued').slice(0, Math.max(0, PARALLEL - running));
  for (const item of next) void start(item.id);
}

const update = (id: number, patch: Partial<UploadItem>) => setUploads('items', (i) => i.id === id, patch);

/** The answer given "for all the other files" of the uploads running now. */
let batchChoice: ReplaceChoice | undefined;
/**
 * Names already in each target folder, listed once per batch (a folder that does not exist yet
 * has none). A file that appears meanwhile is still safe: the upload is sent without overwrite.
 */
const namesByDir = new Map<string, Promise<Set<string>>>();
function namesIn(dir: string, password: string): Promise<Set<string>> {
  let names = namesByDir.get(dir);
  if (!names) {
    names = api<ListResp>('/fs/list', { path: dir, password, per_page: 0 }).then(
      (l) => new Set((l.content ?? []).filter((o) => !o.is_dir).map((o) => o.name)),
      () => new Set<string>(),
    );
    namesByDir.set(dir, names);
  }
  return names;
}
/** One question on screen at a time: the next waits for the answer before it. */
let asking: Promise<unknown> = Promise.resolve();

/**
 * With "overwrite" off, a file already at the target is only replaced when the user says so;
 * undefined means "do not upload it".
 */
async function confirmReplace(item: UploadItem, dir: string, password: string): Promise<boolean | undefined> {
  if (uploads.overwrite) return true;
  if (!(await namesIn(dir, password)).has(item.target.slice(dir.length).replace(/^\//, ''))) return false;
  const answer = asking.then(async () => {
    if (batchChoice) return batchChoice;
    const others = uploads.items.filter((i) => i.id !== item.id && (i.status === 'queued' || i.status === 'checking')).length;
    const { choice, all } = await askReplace(item.name, others);
    if (all) batchChoice = choice;
    return choice;
  });
  asking = answer;
  return (await answer) === 'replace' ? true : undefined;
}

async function start(id: number): Promise<void> {
  const item = uploads.items.find((i) => i.id === id)!;
  const file = files.get(id)!;
  const dir = item.target.replace(/\/[^/]*$/, '') || '/';
  update(id, { status: 'checking' });
  const overwrite = await confirmReplace(item, dir, passwordFor(dir)).catch(() => false);
  if (uploads.items.find((i) => i.id === id)?.status !== 'checking') return; // canceled meanwhile
  if (overwrite === undefined) {
    files.delete(id);
    update(id, { status: 'skipped' });
    pump();
    return;
  }
  update(id, { status: 'uploading' });
  const meter = new RateMeter();
  meters.set(id, meter);
  meter.sample(0);
  const progress = (loaded: number) => update(id, { loaded, speed: meter.sample(loaded) });
  const chunk = chunkSize();
  const h =
    chunk !== undefined && file.size > chunk && !uploads.asTask
      ? uploadInChunks(file, item.target, { overwrite, password: passwordFor(dir), chunkSize: chunk }, progress, (p) => update(id, { status: p ? 'paused' : 'uploading' }))
      : uploadFile(file, item.target, { asTask: uploads.asTask, overwrite, password: passwordFor(dir) }, progress);
  if ('pause' in h) update(id, { chunked: true });
  handles.set(id, h);
  h.promise
    .then(() => {
      update(id, { status: 'done', loaded: item.size });
      for (const fn of landed) fn(dir);
    })
    .catch((e: ApiError) => update(id, e.code === -1 ? { status: 'canceled' } : { status: 'failed', error: e.message }))
    .finally(() => {
      update(id, { speed: 0 });
      meters.delete(id);
      handles.delete(id);
      files.delete(id);
      pump();
    });
}

export function cancel(id: number): void {
  const item = uploads.items.find((i) => i.id === id);
  if (!item) return;
  if (item.status === 'queued' || item.status === 'checking') {
    files.delete(id);
    update(id, { status: 'canceled' });
    if (item.status === 'checking') pump();
  } else handles.get(id)?.abort();
}

/** Pauses or resumes a chunked upload. */
export function togglePause(id: number): void {
  const h = handles.get(id);
  const item = uploads.items.find((i) => i.id === id);
  if (!h || !('pause' in h) || !item) return;
  if (item.status === 'paused') h.resume();
  else h.pause();
}

export function clearFinished(): void {
  setUploads('items', (l) => l.filter((i) => i.status === 'queued' || i.status === 'checking' || i.status === 'uploading' || i.status === 'paused'));
}

/** The whole queue: bytes, the speed of the uploads running now and the time left at it. */
export function totals(): { loaded: number; size: number; active: boolean; speed: number; left?: number } {
  let loaded = 0;
  let size = 0;
  let active = false;
  let speed = 0;
  for (const i of uploads.items) {
    if (i.status === 'canceled' || i.status === 'failed' || i.status === 'skipped') continue;
    loaded += i.status === 'done' ? i.size : i.loaded;
    size += i.size;
    if (i.status === 'uploading') speed += i.speed;
    if (i.status === 'queued' || i.status === 'checking' || i.status === 'uploading' || i.status === 'paused') active = true;
  }
  return { loaded, size, active, speed, left: active ? timeLeft(size - loaded, speed) : undefined };
}

/** Files of a drop, folders walked recursively (webkitGetAsEntry), with their relative paths. */
export async function filesFromDrop(dt: DataTransfer): Promise<Array<{ file: File; relPath: string }>> {
  const entries = [...dt.items].map((i) => i.webkitGetAsEntry?.()).filter((e): e is FileSystemEntry => !!e);
  if (entries.length === 0) return [...dt.files].map((file) => ({ file, relPath: file.name }));
  const out: Array<{ file: File; relPath: string }> = [];
  const walk = async (entry: FileSystemEntry, prefix: string): Promise<void> => {
    if (entry.isFile) {
      const file = await new Promise<File>((res, rej) => (entry as FileSystemFileEntry).file(res, rej));
      out.push({ file, relPath: prefix + entry.name });
    } else if (entry.isDirectory) {
      const reader = (entry as FileSystemDirectoryEntry).createReader();
      for (;;) {
        const batch = await new Promise<FileSystemEntry[]>((res, rej) => reader.readEntries(res, rej));
        if (batch.length === 0) break;
        for (const child of batch) await walk(child, `${prefix}${entry.name}/`);
      }
    }
  };
  for (const e of entries) await walk(e, '');
  return out;
}

/** Files chosen in an <input type=file> (webkitRelativePath keeps the folder structure). */
export const filesFromInput = (list: FileList) => [...list].map((file) => ({ file, relPath: file.webkitRelativePath || file.name }));
