import { describe, expect, it } from 'vitest';
import { ArchiveTree } from '../../src/archive/compact.js';
import type { ArchiveEntry } from '../../src/archive/entries.js';
import type { Core } from '../../src/core.js';
import { innerJson, innerPage, innerTreeJson } from '../../src/server/obj-json.js';
import { RawJson } from '../../src/server/route.js';

const core = { fileTypes: { ofName: (n: string) => (n.endsWith('.txt') ? 5 : 0) } } as unknown as Core;

function entries(n: number): ArchiveEntry[] {
  const out: ArchiveEntry[] = [{ path: '/dir', size: 0, isDir: true, modified: 1_600_000_000_000, encrypted: false }];
  for (let i = 0; i < n; i++) out.push({ path: `/${i % 3 === 0 ? 'dir/' : ''}${['ünï', '名前', '🎉', 'q"t'][i % 4]}-${i}.txt`, size: i, isDir: false, modified: 1_600_000_000_000 + i * 1000, encrypted: false });
  return out;
}

async function text(data: unknown): Promise<string> {
  if (!(data instanceof RawJson)) return JSON.stringify(data);
  if (typeof data.text === 'string') return data.text;
  let out = '';
  for await (const p of data.text as AsyncIterable<string>) out += p;
  return out;
}

describe('archive trees and pages in slices', () => {
  it('builds the same tree in slices as at once', async () => {
    const list = entries(5000);
    const a = ArchiveTree.of(list, list.length);
    const b = await ArchiveTree.ofInSlices(list, list.length);
    expect([...innerTreeJson(core, b)].join('')).toBe([...innerTreeJson(core, a)].join(''));
    expect(b.count).toBe(a.count);
  });

  it('answers a large page in slices with the bytes of {content, total}', async () => {
    const tree = ArchiveTree.of(entries(4000));
    const total = tree.childrenCount(0);
    const all = [...tree.children(0)].map((c) => innerJson(core, tree.node(c)));
    for (const [start, end] of [[0, total], [500, 2200]] as const) {
      const page = innerPage(core, { tree, id: 0 }, () => ({ start, end }));
      expect(page).toBeInstanceOf(RawJson);
      expect(await text(page)).toBe(JSON.stringify({ content: all.slice(start, end), total }));
    }
    const small = innerPage(core, { tree, id: 0 }, () => ({ start: 0, end: 10 }));
    expect(small).not.toBeInstanceOf(RawJson);
  });
});
