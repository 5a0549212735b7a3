import { lazyRequire } from '../../util/lazy-require.js';

/** xmldom, loaded when an autoindex storage first parses an HTML page. */
const xmldom = lazyRequire<typeof import('@xmldom/xmldom')>('@xmldom/xmldom');
import type { XPathString } from './xpath-html.js';

/** One entry of an index page. `name` is as shown (decoded), `href` the URL segment to fetch it by. */
export interface IndexEntry {
  name: string;
  href: string;
  isDir: boolean;
  size: number;
  /** The size was given in bytes (not rounded to K/M/G): no HEAD is needed to know it. */
  exactSize: boolean;
  modified?: Date;
}

/** The compiled XPaths of an HTML index: items, then name, size and date relative to an item. */
export interface XPaths {
  item: (node: Node) => Node[];
  name: (node: Node) => XPathString;
  modified?: (node: Node) => XPathString;
  size?: (node: Node) => XPathString;
}

const UNITS: Record<string, number> = {
  '': 1, b: 1, byte: 1, bytes: 1,
  k: 2 ** 10, kb: 2 ** 10, kib: 2 ** 10,
  m: 2 ** 20, mb: 2 ** 20, mib: 2 ** 20,
  g: 2 ** 30, gb: 2 ** 30, gib: 2 ** 30,
  t: 2 ** 40, tb: 2 ** 40, tib: 2 ** 40,
  p: 2 ** 50, pb: 2 ** 50, pib: 2 ** 50,
};

/** A size as index pages print it: `1234`, `1.2K`, `3 MiB`, `-` (folders). */
export function parseSize(text: string): { size: number; exact: boolean } | undefined {
  const s = text.trim();
  if (s === '-' || s === '') return { size: 0, exact: false };
  const m = /^([\d.]+)\s*([A-Za-z]*)$/.exec(s);
  if (!m) return undefined;
  const mul = UNITS[m[2]!.toLowerCase()];
  if (mul === undefined) return undefined;
  const n = Number(m[1]);
  if (!Number.isFinite(n)) return undefined;
  return { size: Math.floor(n * mul), exact: mul === 1 && Number.isInteger(n) };
}

function decodeName(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/** Splits `name/` (a folder) and drops a query or an absolute prefix a link may carry. */
function entryName(raw: string): { name: string; isDir: boolean } {
  let s = raw.trim().replace(/[?#].*$/, '');
  const isDir = s.endsWith('/');
  if (isDir) s = s.slice(0, -1);
  s = s.slice(s.lastIndexOf('/') + 1);
  return { name: decodeName(s), isDir };
}

/**
 * Entries of an HTML index page, found as OpenList's Autoindex finds them: each node of the item
 * XPath, then the name, size and modified XPaths evaluated relative to it. Names are decoded, so
 * `href`-based name paths (nginx shortens long names in the link text) give the real names.
 */
export function parseHtmlIndex(html: string, paths: XPaths, parseTime: (s: string) => Date | undefined, ignore: Set<string>): IndexEntry[] {
  // The DOCTYPE is left out: the parser refuses the public-id-only ones real pages carry (Apache's).
  const doc = new (xmldom().DOMParser)({ onError: () => undefined }).parseFromString(html.replace(/<!DOCTYPE[^>]*>/i, ''), 'text/html');
  const items = paths.item(doc as unknown as Node);
  const out: IndexEntry[] = [];
  for (const item of items) {
    const rawName = paths.name(item);
    if (rawName === undefined) continue;
    const { name, isDir } = entryName(rawName);
    if (name === '' || ignore.has(name) || ignore.has(rawName.trim())) continue;
    let size = { size: 0, exact: false };
    if (paths.size) size = parseSize(paths.size(item) ?? '') ?? size;
    const modifiedText = paths.modified?.(item);
    out.push({ name, href: encodeURIComponent(name) + (isDir ? '/' : ''), isDir, size: size.size, exactSize: size.exact && !isDir, modified: modifiedText ? parseTime(modifiedText) : undefined });
  }
  return out;
}

interface NginxJsonEntry {
  name: string;
  type: 'directory' | 'file' | 'other';
  mtime?: string;
  size?: number;
}

/** nginx's `autoindex_format json`: `[{name, type, mtime, size}]`. */
export function parseNginxJson(body: string, ignore: Set<string>): IndexEntry[] {
  const list = JSON.parse(body) as NginxJsonEntry[];
  if (!Array.isArray(list)) throw new Error('the json index is not a list');
  return list
    .filter((e) => typeof e?.name === 'string' && !ignore.has(e.name) && e.type !== 'other')
    .map((e) => {
      const isDir = e.type === 'directory';
      const modified = e.mtime ? new Date(e.mtime) : undefined;
      return {
        name: e.name,
        href: encodeURIComponent(e.name) + (isDir ? '/' : ''),
        isDir,
        size: isDir ? 0 : Number(e.size ?? 0),
        exactSize: !isDir && typeof e.size === 'number',
        modified: modified && !Number.isNaN(modified.getTime()) ? modified : undefined,
      };
    });
}
