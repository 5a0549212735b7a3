/**
 * UTF-7 (RFC 2152), the encoding WOPI gives file names in headers (X-WOPI-SuggestedTarget,
 * X-WOPI-RelativeTarget, X-WOPI-RequestedName, X-WOPI-ValidRelativeTarget): printable ASCII as
 * itself, anything else as `+` + the base64 of its UTF-16 (big-endian) code units + `-`, and `+`
 * itself as `+-`.
 */

const BASE64 = /[A-Za-z0-9+/]/;

/** UTF-16 big-endian bytes to text (Node decodes little-endian only). */
function fromUtf16be(bytes: Buffer): string {
  const even = bytes.subarray(0, bytes.length - (bytes.length % 2));
  const le = Buffer.alloc(even.length);
  for (let i = 0; i < even.length; i += 2) {
    le[i] = even[i + 1]!;
    le[i + 1] = even[i]!;
  }
  return le.toString('utf16le');
}

export function utf7Decode(s: string): string {
  let out = '';
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    if (c !== '+') {
      out += c;
      i++;
      continue;
    }
    let j = i + 1;
    while (j < s.length && BASE64.test(s[j]!)) j++;
    const run = s.slice(i + 1, j);
    // `+-` is a plus sign; a `+` followed by nothing encoded is taken as itself.
    out += run === '' ? '+' : fromUtf16be(Buffer.from(run, 'base64'));
    i = s[j] === '-' ? j + 1 : j;
  }
  return out;
}

/** Printable ASCII but `+`, `\` and `~` is written as itself. */
const direct = (ch: string) => /^[\x20-\x7e]$/.test(ch) && ch !== '+' && ch !== '\\' && ch !== '~';

export function utf7Encode(s: string): string {
  let out = '';
  let pending = '';
  const flush = () => {
    if (!pending) return;
    const le = Buffer.from(pending, 'utf16le');
    const be = Buffer.alloc(le.length);
    for (let i = 0; i < le.length; i += 2) {
      be[i] = le[i + 1]!;
      be[i + 1] = le[i]!;
    }
    out += `+${be.toString('base64').replace(/=+$/, '')}-`;
    pending = '';
  };
  for (const ch of s) {
    if (ch === '+' && !pending) {
      out += '+-';
    } else if (direct(ch)) {
      flush();
      out += ch;
    } else {
      pending += ch;
    }
  }
  flush();
  return out;
}
