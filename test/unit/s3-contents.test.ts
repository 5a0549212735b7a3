import { describe, expect, it } from 'vitest';
import type { Obj } from '../../src/drivers/types.js';
import { contentsXml } from '../../src/protocols/s3/contents.js';
import { etagOf } from '../../src/protocols/s3/etag.js';
import type { Entry, Sorted } from '../../src/protocols/s3/listing.js';

// A folder's page of ListObjects is a slice of the folder's markup rendered once; these check
// that a slice is exactly what rendering each entry gives, also where it must not slice.

const file = (name: string, size: number, ms = 1_700_000_000_000): Obj => ({ name, size, isDir: false, modified: new Date(ms) });
const folder = (name: string): Obj => ({ name, size: 0, isDir: true, modified: new Date(1_700_000_000_000) });

function folderRows(): Sorted[] {
  const objs = [file('a 1', 1), file('a&2', 2), file('b', 3), file('c', 4), folder('d'), file('e', 5), file('f', 6)];
  return objs.map((obj) => ({ rel: obj.isDir ? `${obj.name}/` : obj.name, obj }));
}

const entriesOf = (rows: Sorted[], dirKey: string, indexes: number[]): Entry[] => indexes.map((index) => ({ key: dirKey + rows[index]!.rel, obj: rows[index]!.obj, from: { rows, index, dirKey } }));

/** The `<Contents>` of one entry, written out here independently of the module. */
function expected(key: string, obj: Obj): string {
  const k = key.replace(/&/g, '&amp;');
  const etag = etagOf(obj).replace(/"/g, '&quot;');
  return `<Contents><Key>${k}</Key><LastModified>${obj.modified.toISOString()}</LastModified><ETag>${etag}</ETag><Size>${obj.size}</Size><StorageClass>STANDARD</StorageClass></Contents>`;
}

const raw = (k: string) => k;
const url = (k: string) => encodeURIComponent(k).replace(/%2F/g, '/');
const text = (entries: Entry[], encoded = false) => contentsXml(entries, encoded, encoded ? url : raw).bytes.toString('utf8');

describe('ListObjects <Contents> rendering', () => {
  it('a run of a folder’s rows, the same page again, and a run across a folder row are what each entry renders', () => {
    const rows = folderRows();
    for (const indexes of [[0, 1, 2], [0, 1, 2], [2, 3, 5, 6], [5]]) {
      const entries = entriesOf(rows, 'dir/', indexes);
      expect(text(entries)).toBe(entries.map((e) => expected(e.key, e.obj)).join(''));
    }
  });

  it('pages of up to 10 000 rows of a 12 000-row folder (with folder rows among them) are what each entry renders', () => {
    const rows: Sorted[] = [];
    for (let i = 0; i < 12_000; i++) {
      const obj = i % 997 === 5 ? folder(`k${String(i).padStart(5, '0')}`) : file(`k${String(i).padStart(5, '0')} &`, i, 1_700_000_000_000 + i * 1000);
      rows.push({ rel: obj.isDir ? `${obj.name}/` : obj.name, obj });
    }
    const files = (from: number, to: number) => Array.from({ length: to - from }, (_, j) => from + j).filter((i) => !rows[i]!.obj.isDir);
    for (const [from, to] of [[0, 10_000], [10_000, 12_000], [1, 5_001], [0, 10_000]]) {
      const entries = entriesOf(rows, 'big/', files(from!, to!));
      expect(text(entries)).toBe(entries.map((e) => expected(e.key, e.obj)).join(''));
    }
  });

  it('entries skipping a file row, out of order, or from two folders leave the skipped and foreign rows out', () => {
    const rows = folderRows();
    const other = folderRows();
    const cases: Entry[][] = [entriesOf(rows, 'dir/', [1, 3]), entriesOf(rows, 'dir/', [3, 1]), [...entriesOf(rows, 'dir/', [0]), ...entriesOf(other, 'dir/d/', [1])]];
    for (const entries of cases) expect(text(entries)).toBe(entries.map((e) => expected(e.key, e.obj)).join(''));
  });

  it('a row whose object changed after it was rendered is rendered anew', () => {
    const rows = folderRows();
    const entries = entriesOf(rows, 'x/', [0, 1, 2]);
    expect(text(entries)).toContain('<Size>2</Size>');
    rows[1]!.obj.size = 4096;
    rows[1]!.obj.modified = new Date(1_800_000_000_000);
    const again = text(entries);
    expect(again).toBe(entries.map((e) => expected(e.key, e.obj)).join(''));
    expect(again).toContain('<Size>4096</Size>');
    expect(again).toContain('2027-01-15T08:00:00.000Z');
  });

  it('url encoding and the key prefix are part of what is rendered', () => {
    const rows = folderRows();
    const plain = entriesOf(rows, 'p q/', [0, 1]);
    expect(text(plain)).toContain('<Key>p q/a 1</Key>');
    expect(text(plain, true)).toContain('<Key>p%20q/a%201</Key><LastModified>');
    expect(text(plain, true)).toContain('<Key>p%20q/a%262</Key>');
    const other = entriesOf(rows, 'r/', [0, 1]);
    expect(text(other)).toContain('<Key>r/a 1</Key>');
    expect(text(other)).toContain('<Key>r/a&amp;2</Key>');
  });
});
