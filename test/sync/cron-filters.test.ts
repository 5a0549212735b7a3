import { describe, expect, it } from 'vitest';
import { nextFire, parseCron } from '../../src/sync/cron.js';
import { FilterSet, globToRegExp, NO_FILTERS, parseAge, parseSize } from '../../src/sync/filters.js';

const utc = (s: string) => Date.parse(s);
const iso = (t: number | undefined) => (t === undefined ? undefined : new Date(t).toISOString());

describe('sync/cron: 5 fields in a time zone', () => {
  it('fires at the next matching minute, in UTC and in a zone', () => {
    expect(iso(nextFire(parseCron('30 2 * * *'), 'UTC', utc('2026-03-01T02:29:59Z')))).toBe('2026-03-01T02:30:00.000Z');
    expect(iso(nextFire(parseCron('30 2 * * *'), 'UTC', utc('2026-03-01T02:30:00Z')))).toBe('2026-03-02T02:30:00.000Z');
    expect(iso(nextFire(parseCron('0 9 * * 1-5'), 'America/New_York', utc('2026-01-03T00:00:00Z')))).toBe('2026-01-05T14:00:00.000Z');
    expect(iso(nextFire(parseCron('*/15 * * * *'), 'Asia/Kolkata', utc('2026-01-01T00:01:00Z')))).toBe('2026-01-01T00:15:00.000Z');
    expect(iso(nextFire(parseCron('0 0 1 jan *'), 'Europe/Berlin', utc('2026-06-01T00:00:00Z')))).toBe('2026-12-31T23:00:00.000Z');
  });

  it('keeps the wall clock across daylight saving time, and skips an hour that does not exist', () => {
    // Europe/Berlin: 2026-03-29 02:00 → 03:00; 2026-10-25 03:00 → 02:00.
    expect(iso(nextFire(parseCron('0 12 * * *'), 'Europe/Berlin', utc('2026-03-28T12:00:00Z')))).toBe('2026-03-29T10:00:00.000Z');
    expect(iso(nextFire(parseCron('30 2 * * *'), 'Europe/Berlin', utc('2026-03-28T02:00:00Z')))).toBe('2026-03-30T00:30:00.000Z');
    expect(iso(nextFire(parseCron('0 0 * * *'), 'Europe/Berlin', utc('2026-03-28T23:30:00Z')))).toBe('2026-03-29T22:00:00.000Z');
    expect(iso(nextFire(parseCron('0 12 * * *'), 'Europe/Berlin', utc('2026-10-24T12:00:00Z')))).toBe('2026-10-25T11:00:00.000Z');
  });

  it('day of month or day of week (Vixie), names, 7 as Sunday, steps in ranges; never for Feb 30', () => {
    const spec = parseCron('0 0 13 * fri');
    expect(iso(nextFire(spec, 'UTC', utc('2026-02-01T00:00:00Z')))).toBe('2026-02-06T00:00:00.000Z');
    expect(iso(nextFire(parseCron('0 0 * * 7'), 'UTC', utc('2026-02-01T00:00:00Z')))).toBe('2026-02-08T00:00:00.000Z');
    expect([...parseCron('1-10/3 * * * *').minute]).toEqual([1, 4, 7, 10]);
    expect(nextFire(parseCron('0 0 30 2 *'), 'UTC', utc('2026-01-01T00:00:00Z'))).toBeUndefined();
  });

  it('refuses what is not a schedule', () => {
    for (const [expr, msg] of [['* * * *', /5 fields/], ['60 * * * *', /minute/], ['* 24 * * *', /hour/], ['* * 0 * *', /day of month/], ['* * * 13 *', /month/], ['* * * * 8', /day of week/], ['*/0 * * * *', /step/], ['5-1 * * * *', /backwards/], ['* * * foo *', /month/]] as const) {
      expect(() => parseCron(expr), expr).toThrow(msg);
    }
  });
});

describe('sync/filters: rclone globs, sizes, ages', () => {
  it('matches as rclone does: * within a segment, ** across, ?, classes, alternatives, anchoring, folders', () => {
    const m = (g: string, p: string) => globToRegExp(g).test(p);
    expect(m('*.txt', '/a/b/c.txt')).toBe(true);
    expect(m('*.txt', '/c.txt.bak')).toBe(false);
    expect(m('/*.txt', '/a/c.txt')).toBe(false);
    expect(m('/*.txt', '/c.txt')).toBe(true);
    expect(m('a/*.txt', '/x/a/c.txt')).toBe(true);
    expect(m('a/*.txt', '/a/b/c.txt')).toBe(false);
    expect(m('a/**.txt', '/a/b/c.txt')).toBe(true);
    expect(m('file?.log', '/file1.log')).toBe(true);
    expect(m('file?.log', '/file12.log')).toBe(false);
    expect(m('[a-c]*.md', '/beta.md')).toBe(true);
    expect(m('[!a-c]*.md', '/beta.md')).toBe(false);
    expect(m('*.{jpg,png}', '/p/x.png')).toBe(true);
    expect(m('tmp/', '/tmp/deep/x')).toBe(true);
    expect(m('tmp/', '/tmpx/y')).toBe(false);
    expect(m('a+b(1).txt', '/a+b(1).txt')).toBe(true);
  });

  it('includes, excludes, size and age bounds decide a file', () => {
    const now = utc('2026-06-01T00:00:00Z');
    const f = new FilterSet({ ...NO_FILTERS, include: ['*.txt'], exclude: ['secret/**'], min_size: 2, max_size: 100, max_age: 86_400 });
    expect(f.admits('/a.txt', 10, new Date(now - 1000), now)).toBe(true);
    expect(f.admits('/a.bin', 10, new Date(now - 1000), now)).toBe(false);
    expect(f.admits('/secret/a.txt', 10, new Date(now - 1000), now)).toBe(false);
    expect(f.admits('/a.txt', 1, new Date(now - 1000), now)).toBe(false);
    expect(f.admits('/a.txt', 101, new Date(now - 1000), now)).toBe(false);
    expect(f.admits('/a.txt', 10, new Date(now - 2 * 86_400_000), now)).toBe(false);
    expect(new FilterSet(NO_FILTERS).empty).toBe(true);
  });

  it('reads sizes and ages as rclone writes them', () => {
    expect(parseSize('10k', 'x')).toBe(10_240);
    expect(parseSize('1.5M', 'x')).toBe(1_572_864);
    expect(parseSize('2GiB', 'x')).toBe(2 * 1024 ** 3);
    expect(parseSize(512, 'x')).toBe(512);
    expect(parseAge('1h30m', 'x')).toBe(5400);
    expect(parseAge('7d', 'x')).toBe(604_800);
    expect(parseAge('90', 'x')).toBe(90);
    expect(() => parseSize('-1', 'x')).toThrow(/not a size/);
    expect(() => parseAge('soon', 'x')).toThrow(/not an age/);
  });
});
