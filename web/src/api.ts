// The wire API (README "HTTP API"): every /api answer is {code, message, data}.
import { basePath } from './config';

const TOKEN_KEY = 'token';

export class ApiError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export const token = {
  get: () => localStorage.getItem(TOKEN_KEY) ?? '',
  set: (v: string) => (v ? localStorage.setItem(TOKEN_KEY, v) : localStorage.removeItem(TOKEN_KEY)),
};

/** Called when the server says the session is over (code 401). */
let onUnauthorized: () => void = () => {};
export const setUnauthorizedHandler = (fn: () => void) => (onUnauthorized = fn);

function headers(extra: Record<string, string> = {}, tk = token.get()): Record<string, string> {
  const h: Record<string, string> = { ...extra };
  if (tk) h.Authorization = tk;
  return h;
}

export async function api<T = unknown>(route: string, body?: unknown, method = body === undefined ? 'GET' : 'POST', extraHeaders: Record<string, string> = {}): Promise<T> {
  const sent = token.get();
  const res = await fetch(`${basePath}/api${route}`, {
    method,
    headers: headers(body === undefined ? extraHeaders : { ...extraHeaders, 'Content-Type': 'application/json' }, sent),
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  let env: { code: number; message: string; data: T };
  try {
    env = await res.json();
  } catch {
    throw new ApiError(res.status, `HTTP ${res.status}`);
  }
  // Only a refusal of the token this request carried ends the session: an answer to an older
  // request (sent before a login, or with a token since replaced) must not log the user out.
  if (env.code === 401 && sent && sent === token.get()) onUnauthorized();
  if (env.code !== 200) throw new ApiError(env.code, env.message);
  return env.data;
}

/** Percent-encodes each segment of a virtual path, keeping the slashes. */
export const encodePath = (p: string) => p.split('/').map(encodeURIComponent).join('/');

export const joinPath = (dir: string, name: string) => (dir === '/' ? `/${name}` : `${dir}/${name}`);
export const parentOf = (p: string) => p.replace(/\/[^/]*$/, '') || '/';
export const baseName = (p: string) => p.slice(p.lastIndexOf('/') + 1);

/** The raw link of a file (/d with its sign), absolute, for downloads and "copy link". */
export function rawLink(path: string, sign: string): string {
  return `${location.origin}${basePath}/d${encodePath(path)}${sign ? `?sign=${encodeURIComponent(sign)}` : ''}`;
}

// The wire's objects: types inferred from the server's zod shapes (src/server/shapes.ts), so a
// field changed there breaks this typecheck. Type-only: nothing of the server reaches the bundle.
export type {
  About,
  AppPassword,
  ArchiveMeta,
  ArchiveTreeEntry,
  GetResp,
  ImportReport,
  Group,
  ListResp,
  Meta,
  Obj,
  Passkey,
  S3Key,
  Session,
  Setting,
  Share,
  SshKey,
  Storage,
  SyncJob,
  SyncReport,
  SyncRun,
  Task,
  TaskKind,
  TrashEntry,
  UploadSnapshot,
  User,
  WopiSession,
} from '../../src/server/wire-types';

export interface UploadHandle {
  promise: Promise<unknown>;
  abort(): void;
}

/**
 * Sends one /api request on `xhr` (fetch has no upload progress) and reads its {code, message, data} answer:
 * a network error rejects with code 0, an abort with code -1.
 */
export function xhrApi<T>(xhr: XMLHttpRequest, method: string, route: string, hdrs: Record<string, string>, body: Blob | null, onProgress?: (loaded: number) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    xhr.open(method, `${basePath}/api${route}`);
    for (const [k, v] of Object.entries(headers())) xhr.setRequestHeader(k, v);
    for (const [k, v] of Object.entries(hdrs)) xhr.setRequestHeader(k, v);
    if (onProgress) xhr.upload.onprogress = (e) => onProgress(e.loaded);
    xhr.onload = () => {
      try {
        const env = JSON.parse(xhr.responseText) as { code: number; message: string; data: T };
        if (env.code === 200) resolve(env.data);
        else reject(new ApiError(env.code, env.message));
      } catch {
        reject(new ApiError(xhr.status, `HTTP ${xhr.status}`));
      }
    };
    xhr.onerror = () => reject(new ApiError(0, 'network error'));
    xhr.onabort = () => reject(new ApiError(-1, 'canceled'));
    xhr.send(body);
  });
}

/** PUT /api/fs/put with progress. */
export function uploadFile(
  file: File,
  target: string,
  opts: { asTask: boolean; overwrite: boolean; password?: string },
  onProgress: (loaded: number) => void,
): UploadHandle {
  const xhr = new XMLHttpRequest();
  const promise = xhrApi(
    xhr,
    'PUT',
    '/fs/put',
    {
      'File-Path': encodePath(target),
      'As-Task': String(opts.asTask),
      Overwrite: String(opts.overwrite),
      'Last-Modified': String(file.lastModified),
      ...(opts.password ? { Password: opts.password } : {}),
      'Content-Type': file.type || 'application/octet-stream',
    },
    file,
    onProgress,
  );
  return { promise, abort: () => xhr.abort() };
}

/** The password of login/hash: sha256hex(password + "-https://github.com/alist-org/alist"). */
export async function hashPassword(password: string): Promise<string | undefined> {
  if (!crypto.subtle) return undefined; // not a secure context: fall back to the plain login
  const buf = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(`${password}-https://github.com/alist-org/alist`));
  return [...new Uint8Array(buf)].map((b) => b.toString(16).padStart(2, '0')).join('');
}
