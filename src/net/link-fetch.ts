import type { IncomingMessage } from 'node:http';
import { AppError, Forbidden, isAbort, Unsupported, Upstream } from '../errors.js';
import { BlockedAddress } from './url-guard.js';
import { openGuarded } from './guarded-http.js';

/** The setting that lets the server fetch untrusted link URLs on loopback/private/link-local addresses. */
export const URL_FETCH_SETTING = 'url_fetch_allow_private';
/** A proxied download may wait on a slow client (backpressure) this long before the upstream is dropped. */
const IDLE_TIMEOUT_MS = 300_000;

/** What a fetch needs of a driver's link (drivers/types.ts `Link`): its URL, headers, and whether the URL is storage content. */
export interface LinkTarget {
  url?: string;
  header?: Record<string, string>;
  untrustedUrl?: boolean;
}

export interface LinkRequest {
  method?: 'GET' | 'HEAD';
  /** Sent before the link's own headers, which win. */
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/**
 * The one way the server itself requests a driver link's URL (proxy, copies, ranges, size
 * probes). A link marked `untrustedUrl` (its URL is storage content, e.g. UrlTree) may only
 * reach public addresses unless `url_fetch_allow_private` is on; every redirect is checked
 * again and the connection goes to the checked address. Links of drivers that talk to an
 * admin-configured peer are not restricted.
 */
export class LinkFetcher {
  constructor(private readonly allowPrivate: () => boolean) {}

  /** The answer to a request of the link's URL, after redirects; refusals are Forbidden. */
  async open(link: LinkTarget, req: LinkRequest = {}): Promise<IncomingMessage> {
    if (!link.url) throw new Unsupported('the link has no url');
    const allowPrivate = !link.untrustedUrl || this.allowPrivate();
    try {
      const { res } = await openGuarded(link.url, {
        allowPrivate,
        setting: URL_FETCH_SETTING,
        method: req.method,
        headers: { ...req.headers, ...lowerKeys(link.header) },
        signal: req.signal,
        idleTimeoutMs: IDLE_TIMEOUT_MS,
      });
      return res;
    } catch (err) {
      if (err instanceof BlockedAddress) throw new Forbidden(err.message);
      if (err instanceof AppError || isAbort(err)) throw err;
      throw new Upstream(`fetching ${hostOf(link.url)} failed: ${(err as Error).message}`);
    }
  }
}

const lowerKeys = (h: Record<string, string> | undefined) => Object.fromEntries(Object.entries(h ?? {}).map(([k, v]) => [k.toLowerCase(), v]));

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'the url';
  }
}
