import { describe, expect, it } from 'vitest';
import { differs, sameFile, sharedHash } from '../../src/fs/compare.js';

const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, 0) + s);

describe('fs/compare: is the destination the same file', () => {
  it('mtime: same size and times within the tolerance (1 s by default)', () => {
    expect(sameFile({ size: 5, modified: at(0) }, { size: 5, modified: at(999) }, 'mtime')).toBe(true);
    expect(sameFile({ size: 5, modified: at(0) }, { size: 5, modified: at(1000) }, 'mtime')).toBe(true);
    expect(differs({ size: 5, modified: at(0) }, { size: 5, modified: at(1001) }, 'mtime')).toMatch(/^modified /);
    expect(sameFile({ size: 5, modified: at(0) }, { size: 5, modified: at(1500) }, 'mtime', 2000)).toBe(true);
    expect(differs({ size: 5, modified: at(0) }, { size: 6, modified: at(0) }, 'mtime')).toBe('size 5 ≠ 6');
  });

  it('checksum: a hash both sides carry decides, case-insensitively; without one, the size', () => {
    const a = { size: 3, modified: at(0), hash: { md5: 'ABC', sha1: '111' } };
    expect(sharedHash(a, { size: 3, modified: at(0), hash: { sha1: '111' } })).toEqual(['sha1', '111', '111']);
    expect(sameFile(a, { size: 3, modified: at(50_000), hash: { md5: 'abc' } }, 'checksum')).toBe(true);
    expect(differs(a, { size: 3, modified: at(0), hash: { md5: 'abd' } }, 'checksum')).toBe('md5 differs');
    expect(sameFile(a, { size: 3, modified: at(99_000) }, 'checksum')).toBe(true);
    expect(sameFile(a, { size: 4, modified: at(0), hash: { md5: 'abc' } }, 'checksum')).toBe(false);
  });

  it('size: the size alone', () => {
    expect(sameFile({ size: 7, modified: at(0) }, { size: 7, modified: at(86_400_000) }, 'size')).toBe(true);
    expect(sameFile({ size: 7, modified: at(0) }, { size: 8, modified: at(0) }, 'size')).toBe(false);
  });
});
