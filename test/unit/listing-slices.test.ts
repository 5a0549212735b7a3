import { describe, expect, it } from 'vitest';
import { type ListingParts, listingAnswer, listingSlices, listingText } from '../../src/server/listing-render.js';
import { RawJson } from '../../src/server/route.js';
import { TimeSlices } from '../../src/util/slices.js';

const NAMES = ['plain.txt', 'ünïcödé — 名前.md', 'emoji 🎉🧪.bin', 'quote " and \\ backslash', 'tab\tnewline\n', '\u2028line sep', 'zero'];

/** A listing of `n` items (names cycling through awkward ones) paged to start..end. */
function parts(n: number, start = 0, end = n): ListingParts {
  const item = (i: number) => JSON.stringify({ name: `${NAMES[i % NAMES.length]} ${i}`, size: i * 1024, is_dir: i % 5 === 0 });
  return {
    total: n,
    start,
    end: Math.min(end, n),
    items: (from, to) => Array.from({ length: to - from }, (_, k) => item(from + k)),
    rest: JSON.stringify({ total: n, readme: 'läs mig', header: '', write: true, provider: 'Local', write_content_bypass: false }),
  };
}

async function collect(p: ListingParts, perPiece?: number): Promise<{ text: string; pieces: number }> {
  let text = '';
  let pieces = 0;
  // A slice of no time: the generator pauses after every piece.
  for await (const piece of listingSlices(p, new TimeSlices(true), perPiece)) {
    text += piece;
    pieces++;
  }
  return { text, pieces };
}

describe('listing answers in slices', () => {
  const cases: Array<[string, ListingParts]> = [
    ['an empty folder', parts(0)],
    ['one entry', parts(1)],
    ['a small folder', parts(40)],
    ['a page past the end', { ...parts(30), start: 60, end: 30 }],
    ['a middle page', parts(5000, 1200, 1700)],
    ['10 000 entries', parts(10_000)],
  ];
  for (const [what, p] of cases) {
    it(`are byte-identical to the one-piece answer: ${what}`, async () => {
      const one = listingText(p);
      const { text } = await collect(p, 7);
      expect(Buffer.from(text).equals(Buffer.from(one))).toBe(true);
      expect(JSON.parse(text)).toEqual(JSON.parse(one));
    });
  }

  it('make a large answer in many pieces and a small one in one string', async () => {
    const { pieces } = await collect(parts(10_000));
    expect(pieces).toBeGreaterThan(10);
    expect(typeof listingAnswer(parts(100)).text).toBe('string');
    const big = listingAnswer(parts(10_000));
    expect(big).toBeInstanceOf(RawJson);
    expect(typeof big.text).not.toBe('string');
  });

  it('let other work run between the pieces', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 0);
    try {
      await collect(parts(10_000), 50);
    } finally {
      clearInterval(timer);
    }
    expect(ticks).toBeGreaterThan(0);
  });
});
