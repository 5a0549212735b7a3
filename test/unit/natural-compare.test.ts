import { describe, expect, it } from 'vitest';
import { naturalCompare } from '../../src/util/natural-compare.js';

describe('naturalCompare', () => {
  it('orders digit runs by value and the rest by character', () => {
    const names = ['file10.txt', 'file2.txt', 'File1.txt', 'file1.txt', 'a', 'file02.txt', 'b1', 'b01', 'b', '报告2', '报告10', 'x9y10', 'x9y9', ''];
    expect([...names].sort(naturalCompare)).toEqual(['', 'File1.txt', 'a', 'b', 'b1', 'b01', 'file1.txt', 'file2.txt', 'file02.txt', 'file10.txt', 'x9y9', 'x9y10', '报告2', '报告10']);
  });
  it('is a consistent order (antisymmetric, zero only for equal strings)', () => {
    const pairs: Array<[string, string]> = [['a1', 'a01'], ['10', '9'], ['a', 'ab'], ['x', 'x']];
    for (const [a, b] of pairs) {
      expect(Math.sign(naturalCompare(a, b)) + Math.sign(naturalCompare(b, a))).toBe(0);
      expect(naturalCompare(a, b) === 0).toBe(a === b);
    }
  });
});
