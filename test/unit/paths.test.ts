import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cleanPath, isSubPath } from '../../src/util/paths.js';

/** What cleanPath is: the original's FixAndCleanPath, spelled out without its shortcut for clean paths. */
function reference(p: string): string {
  let s = p.replace(/\\/g, '/');
  if (!s.startsWith('/')) s = `/${s}`;
  return path.posix.normalize(s).replace(/(.)\/+$/, '$1');
}

describe('cleanPath (util/paths.ts)', () => {
  it('answers as FixAndCleanPath for named cases and 100 000 random strings of / . \\ and letters', () => {
    const named = ['/', '', '/a', '/a/', '//a', '/a//b', '/a/./b', '/a/../b', '/..', '/.', '/...', '/.a', '/a.', '/a/..', 'a/b', '/a\\b', '/ü/空 格', '/a/.../b', '/./', '/a/.'];
    for (const p of named) expect(cleanPath(p), JSON.stringify(p)).toBe(reference(p));
    const chars = ['/', 'a', '.', '\\', 'é'];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 100_000; i++) {
      let s = '';
      for (let k = 1 + Math.floor(next() * 9); k > 0; k--) s += chars[Math.floor(next() * chars.length)];
      if (cleanPath(s) !== reference(s)) expect(cleanPath(s), JSON.stringify(s)).toBe(reference(s));
    }
    expect([isSubPath('/a', '/a/b'), isSubPath('/a', '/ab'), isSubPath('/a/', '/a//b/'), isSubPath('/', '/x')]).toEqual([true, false, true, true]);
  });
});
