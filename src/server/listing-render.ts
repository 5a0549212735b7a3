import type { Core } from '../core.js';
import type { Obj } from '../drivers/types.js';
import type { Mounted } from '../fs/storages.js';

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
