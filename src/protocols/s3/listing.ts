import type { Obj } from '../../drivers/types.js';
import { isKind } from '../../errors.js';
import type { View } from '../../view/view.js';

export interface Entry {
  key: string;
  obj: Obj;
}

export interface ListRequest {
  prefix: string;
  delimiter: string;
  /** Keys up to and including this one are skipped (marker, start-after, continuation token). */
  after: string;
  maxKeys: number;
}

export interface ListResult {
  contents: Entry[];
  prefixes: string[];
  truncated: boolean;
  /** The last key or prefix returned, where the next page starts after. */
  last: string;
}

/** Keys in S3's order: the bytes of their UTF-8 form. */
const byKey = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** Folder entries of a listing, keyed below the bucket; missing folders list as empty. */
async function entriesOf(view: View, dir: string): Promise<Obj[]> {
  try {
    return (await view.list(view.virtual(dir))).objs;
  } catch (err) {
    if (isKind(err, 'NotFound', 'Hidden', 'BadRequest')) return [];
    throw err;
  }
}

/**
 * ListObjects over the folders of a bucket: objects are files, keyed by their path below the
 * bucket; with delimiter `/` a folder is a common prefix and is not descended into. Only the
 * folder the prefix names is walked.
 */
export async function listKeys(view: View, req: ListRequest): Promise<ListResult> {
  const slash = req.prefix.lastIndexOf('/');
  const baseKey = slash >= 0 ? req.prefix.slice(0, slash + 1) : '';
  const found: Array<{ key: string; obj?: Obj }> = [];
  const walk = async (dirKey: string): Promise<void> => {
    for (const obj of await entriesOf(view, `/${dirKey}`)) {
      const key = `${dirKey}${obj.name}`;
      if (obj.isDir) {
        const folderKey = `${key}/`;
        if (!folderKey.startsWith(req.prefix) && !req.prefix.startsWith(folderKey)) continue;
        if (req.delimiter === '/' && folderKey.startsWith(req.prefix)) found.push({ key: folderKey });
        else await walk(folderKey);
      } else if (key.startsWith(req.prefix)) {
        found.push({ key, obj });
      }
    }
  };
  await walk(baseKey);

  const contents: Entry[] = [];
  const prefixes = new Set<string>();
  const rows: Array<{ key: string; obj?: Obj }> = [];
  for (const f of found) {
    if (!f.obj) {
      rows.push(f);
      continue;
    }
    const at = req.delimiter && req.delimiter !== '/' ? f.key.indexOf(req.delimiter, req.prefix.length) : -1;
    if (at >= 0) rows.push({ key: f.key.slice(0, at + req.delimiter.length) });
    else rows.push(f);
  }
  rows.sort((a, b) => byKey(a.key, b.key));
  let last = '';
  let truncated = false;
  let count = 0;
  for (const row of rows) {
    if (req.after && byKey(row.key, req.after) <= 0) continue;
    if (!row.obj && prefixes.has(row.key)) continue;
    if (count >= req.maxKeys) {
      truncated = true;
      break;
    }
    if (row.obj) contents.push({ key: row.key, obj: row.obj });
    else prefixes.add(row.key);
    last = row.key;
    count++;
  }
  return { contents, prefixes: [...prefixes], truncated, last };
}
