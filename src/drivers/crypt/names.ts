import { Eme } from './eme.js';

// rclone crypt's file name encryption: "standard" (EME over AES-256 with PKCS#7 padding, then
// base32hex/base64 text), "obfuscate" (a keyed character rotation) or "off" (a suffix only).

export type NameMode = 'off' | 'standard' | 'obfuscate';
export type NameEncoding = 'base32' | 'base64';

const BASE32HEX = '0123456789abcdefghijklmnopqrstuv';

function base32hexEncode(data: Buffer): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of data) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32HEX[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  if (bits > 0) out += BASE32HEX[(value << (5 - bits)) & 31];
  return out;
}

function base32hexDecode(text: string): Buffer {
  // rclone writes lower case without padding; a length that no byte count gives is invalid.
  if ([1, 3, 6].includes(text.length % 8)) throw new Error('bad base32 length');
  const out: number[] = [];
  let bits = 0;
  let value = 0;
  for (const ch of text.toLowerCase()) {
    const v = BASE32HEX.indexOf(ch);
    if (v === -1) throw new Error('bad base32 character');
    value = (value << 5) | v;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
    value &= (1 << bits) - 1;
  }
  if (value !== 0) throw new Error('bad base32 trailing bits');
  return Buffer.from(out);
}

function base64Decode(text: string): Buffer {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) throw new Error('bad base64');
  const out = Buffer.from(text, 'base64url');
  if (out.toString('base64url') !== text) throw new Error('bad base64 trailing bits');
  return out;
}

function pad(data: Buffer): Buffer {
  const n = 16 - (data.length % 16);
  return Buffer.concat([data, Buffer.alloc(n, n)]);
}

function unpad(data: Buffer): Buffer {
  const n = data[data.length - 1]!;
  if (n === 0 || n > 16 || n > data.length) throw new Error('bad padding');
  for (let i = data.length - n; i < data.length; i++) if (data[i] !== n) throw new Error('bad padding');
  return data.subarray(0, data.length - n);
}

const QUOTE = '!';

export class NameCipher {
  private readonly eme: Eme;

  constructor(
    readonly mode: NameMode,
    private readonly nameKey: Buffer,
    private readonly tweak: Buffer,
    private readonly encoding: NameEncoding,
    /** Appended to file names in mode "off". */
    private readonly suffix: string,
  ) {
    this.eme = new Eme(nameKey);
  }

  /** One path segment, encrypted. */
  encryptSegment(name: string): string {
    if (name === '') return '';
    if (this.mode === 'obfuscate') return this.obfuscate(name);
    const sealed = this.eme.encrypt(this.tweak, pad(Buffer.from(name, 'utf8')));
    return this.encoding === 'base32' ? base32hexEncode(sealed) : sealed.toString('base64url');
  }

  /** One encrypted path segment, decrypted; throws for a name this cipher did not make. */
  decryptSegment(text: string): string {
    if (text === '') return '';
    if (this.mode === 'obfuscate') return this.deobfuscate(text);
    const raw = this.encoding === 'base32' ? base32hexDecode(text) : base64Decode(text);
    if (raw.length === 0 || raw.length % 16 !== 0) throw new Error('not an encrypted name');
    const name = unpad(this.eme.decrypt(this.tweak, raw));
    const s = name.toString('utf8');
    if (!Buffer.from(s, 'utf8').equals(name)) throw new Error('not an encrypted name');
    return s;
  }

  encryptFileName(name: string): string {
    return this.mode === 'off' ? name + this.suffix : this.encryptSegment(name);
  }

  decryptFileName(text: string): string {
    if (this.mode !== 'off') return this.decryptSegment(text);
    if (!text.endsWith(this.suffix) || text.length === this.suffix.length) throw new Error('no suffix');
    return text.slice(0, text.length - this.suffix.length);
  }

  private keyDirection(start: number): number {
    let dir = start;
    for (const b of this.nameKey) dir += b;
    return dir;
  }

  private obfuscate(name: string): string {
    let sum = 0;
    for (const ch of name) sum += ch.codePointAt(0)!;
    const stored = sum % 256;
    const dir = this.keyDirection(stored);
    let out = `${stored}.`;
    for (const ch of name) {
      const r = ch.codePointAt(0)!;
      if (ch === QUOTE) out += QUOTE + QUOTE;
      else if (r >= 0x30 && r <= 0x39) out += String.fromCodePoint(0x30 + ((r - 0x30 + ((dir % 9) + 1)) % 10));
      else if ((r >= 0x41 && r <= 0x5a) || (r >= 0x61 && r <= 0x7a)) {
        let pos = r - 0x41;
        if (pos >= 26) pos -= 6;
        pos = (pos + ((dir % 25) + 1)) % 52;
        if (pos >= 26) pos += 6;
        out += String.fromCodePoint(0x41 + pos);
      } else if (r >= 0xa0 && r <= 0xff) out += String.fromCodePoint(0xa0 + ((r - 0xa0 + ((dir % 95) + 1)) % 96));
      else if (r >= 0x100) {
        const base = r - (r % 256);
        const next = base + ((r - base + ((dir % 127) + 1)) % 256);
        out += next > 0x10ffff || (next >= 0xd800 && next <= 0xdfff) ? QUOTE + ch : String.fromCodePoint(next);
      } else out += ch;
    }
    return out;
  }

  private deobfuscate(text: string): string {
    const dot = text.indexOf('.');
    if (dot <= 0) throw new Error('not an obfuscated name');
    const prefix = text.slice(0, dot);
    if (prefix === QUOTE) return text.slice(dot + 1);
    if (!/^\d+$/.test(prefix)) throw new Error('not an obfuscated name');
    const dir = this.keyDirection(Number(prefix));
    let out = '';
    let quoted = false;
    for (const ch of text.slice(dot + 1)) {
      const r = ch.codePointAt(0)!;
      if (quoted) {
        out += ch;
        quoted = false;
      } else if (ch === QUOTE) quoted = true;
      else if (r >= 0x30 && r <= 0x39) {
        let next = r - ((dir % 9) + 1);
        while (next < 0x30) next += 10;
        out += String.fromCodePoint(next);
      } else if ((r >= 0x41 && r <= 0x5a) || (r >= 0x61 && r <= 0x7a)) {
        let pos = r - 0x41;
        if (pos >= 26) pos -= 6;
        pos -= (dir % 25) + 1;
        while (pos < 0) pos += 52;
        if (pos >= 26) pos += 6;
        out += String.fromCodePoint(0x41 + pos);
      } else if (r >= 0xa0 && r <= 0xff) {
        let next = r - ((dir % 95) + 1);
        while (next < 0xa0) next += 96;
        out += String.fromCodePoint(next);
      } else if (r >= 0x100) {
        const base = r - (r % 256);
        let next = r - ((dir % 127) + 1);
        while (next < base) next += 256;
        out += String.fromCodePoint(next);
      } else out += ch;
    }
    return out;
  }
}
