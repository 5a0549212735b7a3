import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addRange, chunkIndexRanges, parseRanges, rangesOf, removeRange, type ByteRanges } from '../../src/uploads/ranges.js';

/** The bytes a list of ranges holds, as a set (small sizes only). */
const bytesOf = (r: ByteRanges) => new Set(r.flatMap(([a, b]) => Array.from({ length: b - a }, (_, i) => a + i)));
const wellFormed = (r: ByteRanges) => r.every(([a, b], i) => a < b && (i === 0 || a > r[i - 1]![1]));

describe('upload byte ranges', () => {
  it('merges ranges that overlap or touch, and keeps them sorted', () => {
    let r: ByteRanges = [];
    r = addRange(r, 20, 30);
    r = addRange(r, 0, 10);
    expect(r).toEqual([
      [0, 10],
      [20, 30],
    ]);
    r = addRange(r, 10, 20);
    expect(r).toEqual([[0, 30]]);
    r = addRange(r, 5, 8);
    expect(r).toEqual([[0, 30]]);
    expect(addRange([[40, 50]], 0, 10)).toEqual([
      [0, 10],
      [40, 50],
    ]);
  });

  it('splits a range a removal cuts through', () => {
    expect(removeRange([[0, 30]], 10, 20)).toEqual([
      [0, 10],
      [20, 30],
    ]);
    expect(removeRange([[0, 10]], 0, 10)).toEqual([]);
    expect(
      removeRange(
        [
          [0, 10],
          [20, 30],
        ],
        5,
        25,
      ),
    ).toEqual([
      [0, 5],
      [25, 30],
    ]);
  });

  it('holds exactly the bytes added and not removed, in any order (property)', () => {
    const op = fc.record({ add: fc.boolean(), start: fc.nat(200), len: fc.integer({ min: 1, max: 40 }) });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        let r: ByteRanges = [];
        const want = new Set<number>();
        for (const { add, start, len } of ops) {
          r = add ? addRange(r, start, start + len) : removeRange(r, start, start + len);
          for (let i = start; i < start + len; i++) add ? want.add(i) : want.delete(i);
        }
        expect(wellFormed(r)).toBe(true);
        expect([...bytesOf(r)].sort((a, b) => a - b)).toEqual([...want].sort((a, b) => a - b));
        expect(parseRanges(JSON.stringify(r))).toEqual(r);
      }),
    );
  });

  it('is made from parts in any order, and read back only when well formed', () => {
    expect(
      rangesOf([
        { start: 32, size: 16 },
        { start: 0, size: 16 },
        { start: 16, size: 16 },
        { start: 64, size: 8 },
      ]),
    ).toEqual([
      [0, 48],
      [64, 72],
    ]);
    for (const bad of ['', 'null', '{}', '[[1]]', '[[5,2]]', '[[0,10],[5,20]]', '[[0,"9"]]', 'not json']) expect(parseRanges(bad)).toBeUndefined();
    expect(parseRanges(null)).toBeUndefined();
    expect(parseRanges('[]')).toEqual([]);
  });

  it('lists chunk indexes as OpenList does, one range for a sequential upload', () => {
    expect(chunkIndexRanges([[0, 64 * 16]], 16)).toEqual([[0, 63]]);
    expect(
      chunkIndexRanges(
        [
          [0, 48],
          [80, 100],
        ],
        16,
      ),
    ).toEqual([
      [0, 2],
      [5, 6],
    ]);
    expect(chunkIndexRanges([], 16)).toEqual([]);
  });
});
