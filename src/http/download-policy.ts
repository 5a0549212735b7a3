import path from 'node:path';
import { mustProxy } from '../drivers/form.js';
import type { Link } from '../drivers/types.js';
import type { Mounted } from '../fs/storages.js';
import { encodePath } from '../util/encode-path.js';

/**
 * Where a download is asked for, each with the rule the original applies there:
 * - `d`: `/d` (raw link) — redirects to the driver's URL unless the storage or the type proxies.
 * - `p`: `/p` (proxy link) — streams, where the storage proxies or the type may be proxied; a
 *   storage's `down_proxy_url` takes the client there first (unless `?d` asks for the bytes).
 * - `ap`: `/ap` (an archive entry, proxied) — as `p`, minus the down-proxy.
 * - `raw_url`: the `raw_url` of `/api/fs/get` — the link a client will fetch.
 * - `share`: `/sd` (a share's download) — redirects unless `share_force_proxy` or the storage proxies.
 * - `webdav`: WebDAV GET — the storage's `webdav_policy` (`302_redirect`, `use_proxy_url`, else native proxy).
 */
export type DownloadFront = 'd' | 'p' | 'ap' | 'raw_url' | 'share' | 'webdav';

/** What the policy reads of the settings. */
export interface DownloadSettings {
  get(key: string): string;
  getBool(key: string): boolean;
}

export interface DownloadPlan {
  /** `/p` and `/ap` where the storage does not proxy and the type may not be proxied: refused (`proxy not allowed`). */
  refused: boolean;
  /** The first `down_proxy_url`, where the client is sent before the driver is asked (no trailing slash). */
  downProxy?: string;
  /** Whether the file goes through this server. */
  proxied: boolean;
  /** A link that also offers the bytes here (a file) is streamed rather than redirected (shares). */
  fileFirst?: boolean;
}

const listSetting = (settings: DownloadSettings, key: string) =>
  settings
    .get(key)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

const extOf = (p: string) => path.posix.extname(p).slice(1).toLowerCase();

/**
 * The one download policy: for a file of `storage` asked for through `front`, whether it is
 * refused, sent to the storage's down-proxy, or proxied rather than redirected to the driver's
 * link. Every download route and WebDAV ask it; none decides on its own.
 */
export function downloadPlan(front: DownloadFront, storage: Mounted, virtualPath: string, settings: DownloadSettings, opts: { direct?: boolean } = {}): DownloadPlan {
  const row = storage.row;
  const ext = extOf(virtualPath);
  const storageProxies = mustProxy(storage.factory.config) || row.web_proxy;
  const downProxy = row.down_proxy_url.split('\n')[0]?.trim().replace(/\/+$/, '') || undefined;
  const mayProxy = () => storageProxies || row.webdav_policy === 'use_proxy_url' || listSetting(settings, 'proxy_types').includes(ext) || listSetting(settings, 'text_types').includes(ext);
  switch (front) {
    case 'd':
      return { refused: false, proxied: storageProxies || listSetting(settings, 'proxy_types').includes(ext) };
    case 'p': {
      const refused = !mayProxy();
      return { refused, proxied: true, downProxy: refused || opts.direct ? undefined : downProxy };
    }
    case 'ap':
      return { refused: !mayProxy(), proxied: true };
    case 'raw_url':
      return { refused: false, proxied: storageProxies, downProxy: storageProxies ? downProxy : undefined };
    case 'share':
      return { refused: false, proxied: settings.getBool('share_force_proxy') || storageProxies, fileFirst: true };
    case 'webdav':
      return { refused: false, proxied: row.webdav_policy !== '302_redirect', downProxy: row.webdav_policy === 'use_proxy_url' ? downProxy : undefined };
  }
}

/** The URL a client is redirected to instead of being streamed the file, if the plan and the link allow one. */
export function redirectOf(plan: DownloadPlan, link: Link): string | undefined {
  if (plan.proxied || !link.url || (plan.fileFirst && link.file)) return undefined;
  return link.url;
}

/** The down-proxy URL of a file: `<down_proxy_url><path>?sign=<sign>`. */
export function downProxyUrl(base: string, virtualPath: string, sign: string): string {
  return `${base}${encodePath(virtualPath)}?sign=${sign}`;
}
