import type * as Fxp from 'fast-xml-parser';
import { BadRequest, Upstream } from '../errors.js';
import type { LinkFetcher } from '../net/link-fetch.js';
import { lazyRequire } from '../util/lazy-require.js';

/** One `<action>` of a discovery XML: what an online office does with files of one extension. */
export interface WopiAction {
  /** `view`, `edit`, `embedview`, `editnew`, … */
  name: string;
  ext: string;
  /** The action URL's template (`urlsrc`), with its `<name=PLACEHOLDER&>` optional parameters. */
  urlsrc: string;
  app: string;
  favIconUrl?: string;
}

/** The actions of one discovery XML by extension (lower case), in the order it lists them. */
export type Discovered = Map<string, WopiAction[]>;

const REFRESH_MS = 12 * 60 * 60 * 1000;
const MAX_XML_BYTES = 8 * 1024 * 1024;
const loadFxp = lazyRequire<typeof Fxp>('fast-xml-parser');

type Node = Record<string, unknown>;
const list = (v: unknown): Node[] => (Array.isArray(v) ? v : v === undefined ? [] : [v]).filter((x): x is Node => typeof x === 'object' && x !== null);
const attr = (n: Node, name: string): string => (typeof n[`@_${name}`] === 'string' ? (n[`@_${name}`] as string) : '');

/** The actions a discovery XML (`<wopi-discovery><net-zone><app><action …/>`) offers; every net zone, the first listed first. */
export function parseDiscovery(xml: string): Discovered {
  let doc: Node;
  try {
    const parser = new (loadFxp().XMLParser)({ ignoreAttributes: false, attributeNamePrefix: '@_', parseAttributeValue: false, parseTagValue: false, processEntities: true });
    doc = parser.parse(xml) as Node;
  } catch (err) {
    throw new Upstream(`the WOPI discovery is not XML: ${(err as Error).message}`);
  }
  const root = list(doc['wopi-discovery'])[0];
  if (!root) throw new Upstream('the WOPI discovery has no <wopi-discovery> element');
  const out: Discovered = new Map();
  for (const zone of list(root['net-zone'])) {
    for (const app of list(zone.app)) {
      for (const a of list(app.action)) {
        const ext = attr(a, 'ext').toLowerCase();
        const urlsrc = attr(a, 'urlsrc');
        if (!ext || !urlsrc) continue;
        const action: WopiAction = { name: attr(a, 'name'), ext, urlsrc, app: attr(app, 'name'), favIconUrl: attr(app, 'favIconUrl') || undefined };
        const have = out.get(ext) ?? [];
        if (!have.some((h) => h.name === action.name)) have.push(action);
        out.set(ext, have);
      }
    }
  }
  return out;
}

/** Values the host gives the action URL's placeholders; the others are dropped with their parameter. */
export interface ActionUrlValues {
  wopiSrc: string;
  /** The user's language (RFC 1766, e.g. en-US): UI_LLCC and DC_LLCC. */
  lang: string;
}

/**
 * The action's URL without its query: what OpenList answers as `action_url`, to which its front
 * end appends `?WOPISrc=…&lang=…` itself.
 */
export function actionBase(urlsrc: string): string {
  const q = urlsrc.search(/[?<]/);
  return q === -1 ? urlsrc : urlsrc.slice(0, q);
}

/**
 * The URL an online office is opened at for one file (Microsoft's "Action URLs"): each optional
 * parameter `<name=PLACEHOLDER&>` of the template is filled (`name=value&`) when the host knows
 * the placeholder's value and removed otherwise, then `WOPISrc` is added to the query.
 */
export function actionUrl(urlsrc: string, v: ActionUrlValues): string {
  const known: Record<string, string> = { UI_LLCC: v.lang, DC_LLCC: v.lang };
  let url = urlsrc.replace(/<([^=<>]+)=([A-Z_]+)&?>/g, (_all, name: string, placeholder: string) => {
    const value = known[placeholder];
    return value === undefined ? '' : `${name}=${encodeURIComponent(value)}&`;
  });
  url = url.replace(/<[^>]*>/g, '');
  if (!url.includes('?')) url += '?';
  else if (!url.endsWith('?') && !url.endsWith('&')) url += '&';
  return `${url}WOPISrc=${encodeURIComponent(v.wopiSrc)}`;
}

/**
 * The discovery XML of each online office, fetched through the SSRF guard (a private or
 * loopback address only with url_fetch_allow_private) and kept for 12 hours, as Microsoft
 * recommends; a failed refresh keeps the last copy.
 */
export class Discovery {
  private readonly cache = new Map<string, { at: number; actions: Discovered }>();
  private readonly fetching = new Map<string, Promise<Discovered>>();

  constructor(
    private readonly links: LinkFetcher,
    private readonly now: () => number = Date.now,
  ) {}

  async of(url: string): Promise<Discovered> {
    const kept = this.cache.get(url);
    if (kept && this.now() - kept.at < REFRESH_MS) return kept.actions;
    let run = this.fetching.get(url);
    if (!run) {
      run = this.fetch(url).finally(() => this.fetching.delete(url));
      this.fetching.set(url, run);
    }
    try {
      const actions = await run;
      this.cache.set(url, { at: this.now(), actions });
      return actions;
    } catch (err) {
      if (kept) return kept.actions;
      throw err;
    }
  }

  private async fetch(url: string): Promise<Discovered> {
    try {
      new URL(url);
    } catch {
      throw new BadRequest(`the WOPI discovery_url is not a URL: ${url}`);
    }
    const res = await this.links.open({ url, untrustedUrl: true }, { signal: AbortSignal.timeout(30_000) });
    if (res.statusCode !== 200) {
      res.resume();
      throw new Upstream(`the WOPI discovery answered HTTP ${res.statusCode}`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of res) {
      size += (c as Buffer).length;
      if (size > MAX_XML_BYTES) {
        res.destroy();
        throw new Upstream('the WOPI discovery is larger than 8 MiB');
      }
      chunks.push(c as Buffer);
    }
    return parseDiscovery(Buffer.concat(chunks).toString('utf8'));
  }
}
