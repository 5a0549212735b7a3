// The upload queue: a few files at a time through PUT /api/fs/put, each with its progress,
// cancellable, the listing refreshed as files land.
import { createStore, produce } from 'solid-js/store';
import { ApiError, joinPath, uploadFile, type UploadHandle } from './api';
import { passwordFor } from './state';

const PARALLEL = 3;

export interface UploadItem {
  id: number;
  name: string;
  target: string;
  size: number;
  loaded: number;
  status: 'queued' | 'uploading' | 'done' | 'failed' | 'canceled';
  error?: string;
}

export const [uploads, setUploads] = createStore<{ items: UploadItem[]; asTask: boolean; overwrite: boolean }>({
  items: [],
  asTask: false,
  overwrite: true,
});

const files = new Map<number, File>();
const handles = new Map<number, UploadHandle>();
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
        s.items.push({ id, name: relPath, target: joinPath(dir, relPath), size: file.size, loaded: 0, status: 'queued' });
      }
    }),
  );
  pump();
}

function pump(): void {
  const running = uploads.items.filter((i) => i.status === 'uploading').length;
  const next = uploads.items.filter((i) => i.status === 'queued').slice(0, Math.max(0, PARALLEL - running));
  for (const item of next) start(item.id);
}

const update = (id: number, patch: Partial<UploadItem>) => setUploads('items', (i) => i.id === id, patch);

function start(id: number): void {
  const item = uploads.items.find((i) => i.id === id)!;
  const file = files.get(id)!;
  update(id, { status: 'uploading' });
  const dir = item.target.replace(/\/[^/]*$/, '') || '/';
  const h = uploadFile(file, item.target, { asTask: uploads.asTask, overwrite: uploads.overwrite, password: passwordFor(dir) }, (loaded) =>
    update(id, { loaded }),
  );
  handles.set(id, h);
  h.promise
    .then(() => {
      update(id, { status: 'done', loaded: item.size });
      for (const fn of landed) fn(dir);
    })
    .catch((e: ApiError) => update(id, e.code === -1 ? { status: 'canceled' } : { status: 'failed', error: e.message }))
    .finally(() => {
      handles.delete(id);
      files.delete(id);
      pump();
    });
}

export function cancel(id: number): void {
  const item = uploads.items.find((i) => i.id === id);
  if (!item) return;
  if (item.status === 'queued') {
    files.delete(id);
    update(id, { status: 'canceled' });
  } else handles.get(id)?.abort();
}

export function clearFinished(): void {
  setUploads('items', (l) => l.filter((i) => i.status === 'queued' || i.status === 'uploading'));
}

export function totals(): { loaded: number; size: number; active: boolean } {
  let loaded = 0;
  let size = 0;
  let active = false;
  for (const i of uploads.items) {
    if (i.status === 'canceled') continue;
    loaded += i.status === 'done' ? i.size : i.loaded;
    size += i.size;
    if (i.status === 'queued' || i.status === 'uploading') active = true;
  }
  return { loaded, size, active };
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
