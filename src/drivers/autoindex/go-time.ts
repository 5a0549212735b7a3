// Go's reference-time layouts ("2006-01-02 15:04"), as OpenList's modified_time_format is written.

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/** Layout tokens, longest first, with the pattern they match and the field they set. */
const TOKENS: Array<[string, string, string]> = [
  ['January', '[A-Za-z]+', 'monthName'],
  ['Monday', '[A-Za-z]+', 'skip'],
  ['Z07:00', 'Z|[+-]\\d\\d:\\d\\d', 'zone'],
  ['-07:00', '[+-]\\d\\d:\\d\\d', 'zone'],
  ['-0700', '[+-]\\d{4}', 'zone'],
  ['2006', '\\d{4}', 'year'],
  ['.000', '\\.\\d{3}', 'millis'],
  ['Jan', '[A-Za-z]{3}', 'monthName'],
  ['Mon', '[A-Za-z]{3}', 'skip'],
  ['MST', '[A-Z]{3,5}', 'skip'],
  ['_2', ' ?\\d{1,2}', 'day'],
  ['01', '\\d{2}', 'month'],
  ['02', '\\d{2}', 'day'],
  ['15', '\\d{2}', 'hour'],
  ['03', '\\d{2}', 'hour12'],
  ['04', '\\d{2}', 'minute'],
  ['05', '\\d{2}', 'second'],
  ['06', '\\d{2}', 'year2'],
  ['PM', 'AM|PM', 'ampm'],
  ['pm', 'am|pm', 'ampm'],
  ['1', '\\d{1,2}', 'month'],
  ['2', '\\d{1,2}', 'day'],
  ['3', '\\d{1,2}', 'hour12'],
  ['4', '\\d{1,2}', 'minute'],
  ['5', '\\d{1,2}', 'second'],
];

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A parser for one layout: the date a text shows (UTC unless the layout has a zone), or undefined. */
export function goTimeParser(layout: string): (text: string) => Date | undefined {
  let pattern = '';
  const fields: string[] = [];
  for (let i = 0; i < layout.length; ) {
    const tok = TOKENS.find(([t]) => layout.startsWith(t, i));
    if (tok) {
      pattern += `(${tok[1]})`;
      fields.push(tok[2]);
      i += tok[0].length;
    } else {
      pattern += escape(layout[i]!);
      i++;
    }
  }
  const re = new RegExp(`^${pattern}$`);
  return (text) => {
    const m = re.exec(text.trim());
    if (!m) return undefined;
    const v = { year: 1, month: 1, day: 1, hour: 0, minute: 0, second: 0, millis: 0, zone: 0 };
    let pm: boolean | undefined;
    for (const [i, field] of fields.entries()) {
      const s = m[i + 1]!.trim();
      switch (field) {
        case 'monthName': {
          const n = MONTHS.indexOf(s.slice(0, 3).toLowerCase());
          if (n < 0) return undefined;
          v.month = n + 1;
          break;
        }
        case 'year2':
          v.year = 2000 + Number(s) - (Number(s) >= 69 ? 100 : 0);
          break;
        case 'hour12':
          v.hour = Number(s) % 12;
          break;
        case 'ampm':
          pm = s.toLowerCase() === 'pm';
          break;
        case 'millis':
          v.millis = Number(s.slice(1));
          break;
        case 'zone':
          v.zone = s === 'Z' ? 0 : (s[0] === '-' ? -1 : 1) * (Number(s.slice(1, 3)) * 60 + Number(s.replace(':', '').slice(3, 5)));
          break;
        case 'skip':
          break;
        default:
          (v as Record<string, number>)[field] = Number(s);
      }
    }
    if (pm) v.hour += 12;
    const ms = Date.UTC(v.year, v.month - 1, v.day, v.hour, v.minute, v.second, v.millis) - v.zone * 60_000;
    return Number.isNaN(ms) ? undefined : new Date(ms);
  };
}
