import { expect } from 'vitest';
import type { TestServer } from '../helpers/server.js';

/** Storage fields every driver test uses; `extra` overrides them. */
export function storageRow(mountPath: string, driver: string, addition: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    mount_path: mountPath,
    driver,
    order: 0,
    cache_expiration: 0,
    addition: JSON.stringify(addition),
    order_by: 'name',
    order_direction: 'asc',
    extract_folder: 'front',
    webdav_policy: 'native_proxy',
    ...extra,
  };
}

/** Creates a storage through the admin API and asserts it mounted. Returns its id. */
export async function mount(s: TestServer, token: string, mountPath: string, driver: string, addition: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<number> {
  const r = await s.api('POST', '/api/admin/storage/create', { token, body: storageRow(mountPath, driver, addition, extra) });
  expect(r.code, r.message).toBe(200);
  return r.data.id as number;
}

/** The names of a folder's listing (refreshed), in order. */
export async function names(s: TestServer, token: string, dir: string): Promise<string[]> {
  const r = await s.api('POST', '/api/fs/list', { token, body: { path: dir, refresh: true } });
  expect(r.code, r.message).toBe(200);
  return (r.data.content ?? []).map((o: { name: string }) => o.name);
}

/** The bytes of a file through /d (proxied, or redirected to a URL that is then fetched). */
export async function download(s: TestServer, filePath: string, range?: string): Promise<{ status: number; body: Buffer }> {
  const headers: Record<string, string> = range ? { range } : {};
  const res = await s.inject({ method: 'GET', url: `/d${filePath.split('/').map(encodeURIComponent).join('/')}?sign=${s.core.signer.sign(filePath)}`, headers });
  if (res.statusCode === 302) {
    const r = await fetch(String(res.headers.location), { headers });
    return { status: r.status, body: Buffer.from(await r.arrayBuffer()) };
  }
  return { status: res.statusCode, body: res.rawPayload };
}
