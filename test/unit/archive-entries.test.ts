import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ArchiveTree } from '../../src/archive/compact.js';
import { BombGuard, cleanInner, safeInnerPath } from '../../src/archive/entries.js';
import { isKind } from '../../src/errors.js';

describe('archive entry names (zip-slip)', () => {
  it('refuses names that could leave the target and cleans the rest', () => {
    for (const bad of ['../x', 'a/../../x', '/etc/passwd', 'C:/x', 'c:x', '..\\x', 'a\\..\\..\\x', '..', '', '/', 'a\0b']) expect(safeInnerPath(bad), bad).toBeUndefined();
    expect(safeInnerPath('a/b/c.txt')).toBe('/a/b/c.txt');
    expect(safeInnerPath('./a//b/')).toBe('/a/b');
    expect(safeInnerPath('dir\\file.txt')).toBe('/dir/file.txt');
  });

  it('never yields a path with a `..` segment or outside the root, whatever the name', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('a', '..', '.', '/', '\\', 'C:', 'b.txt', ''), { maxLength: 12 }), (parts) => {
        const p = safeInnerPath(parts.join(''));
        if (p === undefined) return;
        expect(p.startsWith('/')).toBe(true);
        expect(p.split('/').slice(1)).not.toContain('..');
        expect(p.split('/').slice(1)).not.toContain('');
      }),
    );
  });

  it('cleans a client inner path and refuses `..`', () => {
    expect(cleanInner(undefined)).toBe('/');
    expect(cleanInner('/docs/deep')).toBe('/docs/deep');
    expect(() => cleanInner('/../etc')).toThrow('invalid inner path');
  });

  it('builds the tree with implied folders, as compact columns', () => {
    const tree = ArchiveTree.of([
      { path: '/a/b/c.txt', size: 3, isDir: false, modified: 5000, encrypted: false },
      { path: '/top.txt', size: 1, isDir: false, modified: 0, encrypted: false },
      { path: '/a', size: 0, isDir: true, modified: 7000, encrypted: false },
      { path: '/名前.txt', size: 2, isDir: false, modified: 0, encrypted: false },
    ]);
    const names = (id: number) => [...tree.children(id)].map((c) => tree.node(c).name);
    expect(names(0).sort()).toEqual(['a', 'top.txt', '名前.txt'].sort());
    expect(names(tree.find('/a/b')!)).toEqual(['c.txt']);
    expect(tree.node(tree.find('/a/b/c.txt')!)).toEqual({ name: 'c.txt', size: 3, isDir: false, modified: 5 });
    expect(tree.node(tree.find('/a')!)).toMatchObject({ isDir: true, modified: 7 });
    expect(tree.find('/名前.txt')).toBeDefined();
    expect(tree.childrenCount(0)).toBe(3);
    expect(tree.find('/nope')).toBeUndefined();
    expect(tree.find('/a/b/c.txt/x')).toBeUndefined();
  });

  it('keeps many entries in growing columns', () => {
    const n = 5000;
    const tree = ArchiveTree.of(Array.from({ length: n }, (_, i) => ({ path: `/d${i % 7}/f${i}.txt`, size: i, isDir: false, modified: i * 1000, encrypted: false })));
    expect(tree.count).toBe(n + 8);
    expect(tree.node(tree.find('/d1/f4999.txt')!)).toEqual({ name: 'f4999.txt', size: 4999, isDir: false, modified: 4999 });
  });
});

describe('bomb guard', () => {
  it('stops at the size bound, the ratio past its floor, and the entry count', () => {
    const g = new BombGuard({ maxBytes: 1000, maxRatio: 0, maxEntries: 2 }, 10);
    g.add(1000);
    expect(() => g.add(1)).toThrow('setting archive_max_size');
    expect(() => g.checkEntries(3)).toThrow('setting archive_max_entries');
    const r = new BombGuard({ maxBytes: 0, maxRatio: 2, maxEntries: 0 }, 1024);
    r.add(64 * 1024 * 1024);
    let err: unknown;
    try {
      r.add(1);
    } catch (e) {
      err = e;
    }
    expect(isKind(err, 'TooLarge')).toBe(true);
    expect(() => new BombGuard({ maxBytes: 10, maxRatio: 0, maxEntries: 0 }, 1).checkDeclared(11)).toThrow('setting archive_max_size');
  });
});
