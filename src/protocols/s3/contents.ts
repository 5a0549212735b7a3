import type { Obj } from '../../drivers/types.js';
import { etagOf } from './etag.js';
import type { Entry, SortedRows } from './listing.js';
import { escapeXml, RawXml } from './xml.js';

/**
 * The `<Contents>` elements of ListObjects pages.
 *
 * A folder's listing is paged by continuation tokens: every page of a big folder is a run of the
 * same sorted rows (listing.ts keeps them per cached listing). So the markup of a whole folder is
 * rendered once, into one buffer with each row's offset, and a page that is such a run is a slice
 * of it: a page costs a check of its rows (each object's time and size still those rendered), not
 * the escaping, formatting and copying of up to 10 000 entries. Pages that are no run (a
 * delimiter rolling keys into prefixes, keys of several folders, a prefix filtering a folder's
 * rows) are rendered entry by entry. The rendered folders are few and bounded in bytes.
 */

const iso = (d: Date) => (Number.isNaN(d.getTime()) ? new Date(0) : d).toISOString();

/** The part of an entry's `<Contents>` after its key. */
function tail(obj: Obj): string {
  return `</Key><LastModified>${iso(obj.modified)}</LastModified><ETag>${escapeXml(etagOf(obj))}</ETag><Size>${obj.size}</Size><StorageClass>STANDARD</StorageClass></Contents>`;
}

/** One `<Contents>` element as a string. */
const element = (key: string, obj: Obj) => `<Contents><Key>${escapeXml(key)}${tail(obj)}`;

/** A folder's rows rendered: row i's markup is bytes[starts[i], starts[i + 1]) (empty for folders). */
interface Block {
  bytes: Buffer;
  starts: Uint32Array;
  /** Each row's modification time and size when rendered: a row that changed since is not sliced. */
  ms: Float64Array;
  sizes: Float64Array;
}

/**
 * Folders larger than this are rendered entry by entry (a row is about 200 bytes of markup, and
 * at most about 1 250 with a key of S3's longest, 1 024 bytes).
 */
const MAX_BLOCK_ROWS = 50_000;
/** At most this many rendered folders, and bytes over all of them; the least recently used go first. */
const MAX_BLOCKS = 16;
const MAX_BLOCK_BYTES = 64 * 1024 * 1024;

/** Rendered folders by their sorted rows (a new listing is a new array), then by key prefix and encoding. */
const blocks = new Map<SortedRows, Map<string, Block>>();
let blockBytes = 0;

function render(rows: SortedRows, dirKey: string, enc: (key: string) => string): Block {
  const starts = new Uint32Array(rows.length + 1);
  const ms = new Float64Array(rows.length);
  const sizes = new Float64Array(rows.length);
  const parts: string[] = [];
  let at = 0;
  for (let i = 0; i < rows.length; i++) {
    starts[i] = at;
    const { rel, obj } = rows[i]!;
    ms[i] = obj.modified.getTime();
    sizes[i] = obj.size;
    if (obj.isDir) continue;
    const s = element(enc(dirKey + rel), obj);
    parts.push(s);
    at += Buffer.byteLength(s);
  }
  starts[rows.length] = at;
  return { bytes: Buffer.from(parts.join('')), starts, ms, sizes };
}

const blockId = (dirKey: string, encoded: boolean) => `${encoded ? 'url' : 'raw'}:${dirKey}`;

function blockOf(rows: SortedRows, dirKey: string, encoded: boolean, enc: (key: string) => string): Block | undefined {
  if (rows.length > MAX_BLOCK_ROWS) return undefined;
  const id = blockId(dirKey, encoded);
  let byKey = blocks.get(rows);
  const hit = byKey?.get(id);
  if (hit) {
    // Most recently used last.
    blocks.delete(rows);
    blocks.set(rows, byKey!);
    return hit;
  }
  const block = render(rows, dirKey, enc);
  if (!byKey) {
    byKey = new Map();
    blocks.set(rows, byKey);
  }
  byKey.set(id, block);
  blockBytes += block.bytes.length;
  for (const [oldest, old] of blocks) {
    if (blocks.size <= MAX_BLOCKS && blockBytes <= MAX_BLOCK_BYTES) break;
    if (oldest === rows) break;
    for (const b of old.values()) blockBytes -= b.bytes.length;
    blocks.delete(oldest);
  }
  return block;
}

/** The slice of the folder's block a page's entries are, or undefined when they are no run of one folder's rows. */
function slice(entries: Entry[], encoded: boolean, enc: (key: string) => string): Buffer | undefined {
  const first = entries[0]!.from;
  const { rows, dirKey } = first;
  for (let i = 1; i < entries.length; i++) {
    const f = entries[i]!.from;
    if (f.rows !== rows || f.dirKey !== dirKey || f.index <= entries[i - 1]!.from.index) return undefined;
  }
  let block = blockOf(rows, dirKey, encoded, enc);
  if (!block) return undefined;
  if (!current(block, entries)) {
    // An object changed in place since its folder was rendered: render the folder again, once.
    forget(rows, blockId(dirKey, encoded));
    block = blockOf(rows, dirKey, encoded, enc)!;
    if (!current(block, entries)) return undefined;
  }
  for (let i = 1; i < entries.length; i++) {
    // Rows skipped between two entries must have no markup (folders): the slice holds nothing else.
    if (block.starts[entries[i]!.from.index] !== block.starts[entries[i - 1]!.from.index + 1]) return undefined;
  }
  return block.bytes.subarray(block.starts[first.index], block.starts[entries[entries.length - 1]!.from.index + 1]);
}

/** Whether each entry's object has the time and size its row was rendered with. */
function current(block: Block, entries: Entry[]): boolean {
  for (const { obj, from } of entries) {
    if (block.ms[from.index] !== obj.modified.getTime() || block.sizes[from.index] !== obj.size) return false;
  }
  return true;
}

function forget(rows: SortedRows, id: string): void {
  const byKey = blocks.get(rows);
  const old = byKey?.get(id);
  if (!old) return;
  blockBytes -= old.bytes.length;
  byKey!.delete(id);
  if (byKey!.size === 0) blocks.delete(rows);
}

/** The `<Contents>` of a listing page. */
export function contentsXml(entries: Entry[], encoded: boolean, enc: (key: string) => string): RawXml {
  const run = entries.length > 0 ? slice(entries, encoded, enc) : undefined;
  if (run) return new RawXml(run);
  let out = '';
  for (const e of entries) out += element(enc(e.key), e.obj);
  return new RawXml(Buffer.from(out));
}
