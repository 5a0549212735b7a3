import { BadRequest } from '../errors.js';

/**
 * Five-field cron (minute, hour, day of month, month, day of week) evaluated in an IANA time zone
 * through Intl: `*`, lists `a,b`, ranges `a-b`, steps `*\/n` and `a-b/n`, month and weekday names
 * (`jan`, `mon`), weekday 7 as Sunday. As in Vixie cron, when both the day of month and the day of
 * week are restricted a day matching either fires.
 */
export interface CronSpec {
  minute: Set<number>;
  hour: Set<number>;
  dom: Set<number>;
  month: Set<number>;
  dow: Set<number>;
  domAny: boolean;
  dowAny: boolean;
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
const FIELDS: Array<{ name: string; min: number; max: number; names?: string[]; base?: number }> = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTHS, base: 1 },
  { name: 'day of week', min: 0, max: 7, names: DAYS, base: 0 },
];

function value(s: string, f: (typeof FIELDS)[number]): number {
  const i = f.names?.indexOf(s.toLowerCase()) ?? -1;
  const n = i >= 0 ? i + (f.base ?? 0) : /^\d+$/.test(s) ? Number(s) : NaN;
  if (!Number.isInteger(n) || n < f.min || n > f.max) throw new BadRequest(`cron ${f.name}: ${s} is not between ${f.min} and ${f.max}`);
  return n;
}

function field(text: string, f: (typeof FIELDS)[number]): Set<number> {
  const out = new Set<number>();
  for (const part of text.split(',')) {
    const [range, stepText] = part.split('/') as [string, string | undefined];
    const step = stepText === undefined ? 1 : Number(stepText);
    if (!Number.isInteger(step) || step < 1) throw new BadRequest(`cron ${f.name}: step ${stepText} is not a whole number of 1 or more`);
    let lo: number;
    let hi: number;
    if (range === '*') [lo, hi] = [f.min, f.max];
    else if (range.includes('-')) {
      const [a, b] = range.split('-') as [string, string];
      [lo, hi] = [value(a, f), value(b, f)];
      if (lo > hi) throw new BadRequest(`cron ${f.name}: range ${range} runs backwards`);
    } else {
      lo = value(range, f);
      hi = stepText === undefined ? lo : f.max;
    }
    for (let v = lo; v <= hi; v += step) out.add(f.name === 'day of week' && v === 7 ? 0 : v);
  }
  return out;
}

export function parseCron(expr: string): CronSpec {
  const parts = expr.trim().split(/\s+/);
  if (expr.length > 200 || parts.length !== 5) throw new BadRequest('cron takes 5 fields: minute hour day-of-month month day-of-week');
  const [minute, hour, dom, month, dow] = parts.map((p, i) => field(p, FIELDS[i]!)) as [Set<number>, Set<number>, Set<number>, Set<number>, Set<number>];
  return { minute, hour, dom, month, dow, domAny: parts[2] === '*', dowAny: parts[4] === '*' };
}

const formats = new Map<string, Intl.DateTimeFormat>();

/** Checks an IANA time zone name (throws BadRequest for an unknown one). */
export function checkTimeZone(tz: string): string {
  try {
    zoneFormat(tz);
    return tz;
  } catch {
    throw new BadRequest(`unknown time zone ${tz}`);
  }
}

function zoneFormat(tz: string): Intl.DateTimeFormat {
  let f = formats.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: tz, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', weekday: 'short' });
    formats.set(tz, f);
  }
  return f;
}

/** The wall clock of `t` in `tz`. */
function wall(t: number, tz: string): { month: number; day: number; hour: number; minute: number; dow: number } {
  const parts: Record<string, string> = {};
  for (const p of zoneFormat(tz).formatToParts(new Date(t))) parts[p.type] = p.value;
  return { month: Number(parts.month), day: Number(parts.day), hour: Number(parts.hour) % 24, minute: Number(parts.minute), dow: DAYS.indexOf(parts.weekday!.slice(0, 3).toLowerCase()) };
}

const MINUTE = 60_000;
/** How far ahead a schedule is looked for (a Feb 30 never comes). */
const HORIZON = 5 * 366 * 24 * 60 * MINUTE;

/** The first minute after `after` (ms) at which the schedule fires in `tz`; undefined when none within five years. */
export function nextFire(spec: CronSpec, tz: string, after: number): number | undefined {
  let t = Math.floor(after / MINUTE) * MINUTE + MINUTE;
  const end = after + HORIZON;
  while (t <= end) {
    const w = wall(t, tz);
    const dayOk = spec.month.has(w.month) && dayMatches(spec, w.day, w.dow);
    if (!dayOk) {
      // To the last hour of this local day (an hour short, so a 23-hour day is not skipped past).
      t += (w.hour === 23 ? 60 - w.minute : (23 - w.hour) * 60 - w.minute) * MINUTE;
      continue;
    }
    if (!spec.hour.has(w.hour)) {
      t += (60 - w.minute) * MINUTE;
      continue;
    }
    if (spec.minute.has(w.minute)) return t;
    t += MINUTE;
  }
  return undefined;
}

function dayMatches(spec: CronSpec, day: number, dow: number): boolean {
  if (spec.domAny && spec.dowAny) return true;
  if (spec.domAny) return spec.dow.has(dow);
  if (spec.dowAny) return spec.dom.has(day);
  return spec.dom.has(day) || spec.dow.has(dow);
}
