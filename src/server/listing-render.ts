import type { Core } from '../core.js';
import type { Obj } from '../drivers/types.js';
import type { Mounted } from '../fs/storages.js';
import { TimeSlices } from '../util/slices.js';
import { RawJson } from './route.js';

/** Serialises one item to JSON text. */
type Render = (obj: Obj) => string;

interface Memo {
  key: string;
  items: Array<string | undefined>;
}

/**
 * Serialised listing items, memoised per listing: a cached listing is the same array on every
 * hit, so each item (sign and dates included) is rendered once and later requests only join
 * strings. Items are rendered on demand, so a page of a huge folder renders only that page.
 * Memos are dropped with their listing (WeakMap) and when settings change (signs, names, types).
 */
export class ListingRenderer {
  private readonly memos = new WeakMap<Obj[], Memo>();

  constructor(private readonly core: Core) {}

  items(objs: Obj[], parent: string, storage: Mounted | undefined, start: number, end: number, render: Render): string[] {
    const settings = this.core.settings;
    // Expiring signs differ on every request: nothing to memoise then.
    const cacheable = settings.getNumber('link_expiration') <= 0;
    const key = `${settings.version}\0${this.core.metas.version}\0${parent}\0${storage?.row.id ?? 0}\0${storage?.row.enable_sign ?? false}`;
    let memo = cacheable ? this.memos.get(objs) : undefined;
    if (!memo || memo.key !== key) {
      memo = { key, items: new Array(objs.length) };
      if (cacheable) this.memos.set(objs, memo);
    }
    const out: string[] = [];
    for (let i = start; i < end; i++) {
      let text = memo.items[i];
      if (text === undefined) {
        text = render(objs[i]!);
        memo.items[i] = text;
      }
      out.push(text);
    }
    return out;
  }
}

/** Items rendered per piece of a listing answer made in slices. */
const PIECE_ITEMS = 256;
/** Listings of up to this many items on the page are answered as one string (a few ms at most). */
export const ONE_PIECE_ITEMS = 1000;

/** What a listing answer is made of: a page of items, rendered on demand, and the other fields. */
export interface ListingParts {
  total: number;
  start: number;
  end: number;
  /** The JSON texts of items `from` .. `to` - 1. */
  items(from: number, to: number): string[];
  /** The fields after `content` as JSON object text (`{"total":…}`). */
  rest: string;
}

/** The answer's `data` in one string. */
export function listingText(p: ListingParts): string {
  const content = p.total === 0 ? 'null' : `[${p.items(p.start, p.end).join(',')}]`;
  return `{"content":${content},${p.rest.slice(1)}`;
}

/**
 * The same bytes as listingText, as pieces made in time slices: a few hundred items are rendered
 * and joined per piece, and the event loop gets a turn whenever a slice has run its time, so a
 * 10 000-entry answer never holds other requests for more than a few milliseconds.
 */
export async function* listingSlices(p: ListingParts, slices = new TimeSlices(), perPiece = PIECE_ITEMS): AsyncGenerator<string> {
  if (p.total === 0) {
    yield `{"content":null,${p.rest.slice(1)}`;
    return;
  }
  yield '{"content":[';
  for (let i = p.start; i < p.end; i += perPiece) {
    const piece = p.items(i, Math.min(p.end, i + perPiece)).join(',');
    yield i === p.start ? piece : `,${piece}`;
    await slices.maybePause();
  }
  yield `],${p.rest.slice(1)}`;
}

/** A listing's `data`: one string for a small page, pieces made in slices for a large one. */
export function listingAnswer(p: ListingParts): RawJson {
  return new RawJson(p.end - p.start <= ONE_PIECE_ITEMS ? listingText(p) : listingSlices(p));
}
