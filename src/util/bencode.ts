/**
 * A bounded BEP 3 bencode decoder for untrusted input (a `.torrent` a user uploads). It refuses
 * what a well-formed torrent never has, with a message that says where: more nesting than
 * `maxDepth`, more than `maxItems` values in all, integers with leading zeros or beyond 2^53,
 * strings that run past the end, a repeated dictionary key, bytes after the end (keys out of
 * order are read: some torrent makers write them so).
 * Strings stay bytes (`Buffer`); each dictionary remembers the byte range it was read from, so
 * a torrent's info hash is the SHA-1 of the exact bytes sent, however they were encoded.
 */

export type BValue = number | Buffer | BValue[] | BDict;

export interface BDict {
  /** Keys as text (latin1, so every byte string maps to one key and back). */
  readonly entries: Map<string, BValue>;
  /** [start, end) of this dictionary in the decoded input. */
  readonly span: [number, number];
}

export interface BencodeLimits {
  maxDepth: number;
  maxItems: number;
}

export class BencodeError extends Error {}

const DEFAULT_LIMITS: BencodeLimits = { maxDepth: 32, maxItems: 1_000_000 };
const C_I = 0x69; // i
const C_L = 0x6c; // l
const C_D = 0x64; // d
const C_E = 0x65; // e
const C_COLON = 0x3a;

export const isDict = (v: BValue | undefined): v is BDict => typeof v === 'object' && v !== null && !Buffer.isBuffer(v) && !Array.isArray(v);

/** Decodes one bencoded value that spans the whole input. */
export function bdecode(input: Buffer, limits: Partial<BencodeLimits> = {}): BValue {
  const d = new Decoder(input, { ...DEFAULT_LIMITS, ...limits });
  const v = d.value(0);
  if (d.pos !== input.length) throw new BencodeError(`unexpected data after the end at byte ${d.pos}`);
  return v;
}

class Decoder {
  pos = 0;
  private items = 0;

  constructor(
    private readonly buf: Buffer,
    private readonly limits: BencodeLimits,
  ) {}

  value(depth: number): BValue {
    if (depth > this.limits.maxDepth) throw new BencodeError(`nesting deeper than ${this.limits.maxDepth} at byte ${this.pos}`);
    if (++this.items > this.limits.maxItems) throw new BencodeError(`more than ${this.limits.maxItems} values`);
    const c = this.buf[this.pos];
    if (c === undefined) throw new BencodeError('unexpected end of data');
    if (c === C_I) return this.integer();
    if (c === C_L) return this.list(depth);
    if (c === C_D) return this.dict(depth);
    if (c >= 0x30 && c <= 0x39) return this.bytes();
    throw new BencodeError(`unexpected byte 0x${c.toString(16)} at byte ${this.pos}`);
  }

  private integer(): number {
    const start = ++this.pos;
    const end = this.buf.indexOf(C_E, start);
    if (end < 0) throw new BencodeError(`unterminated integer at byte ${start - 1}`);
    const text = this.buf.toString('latin1', start, end);
    if (!/^(0|-?[1-9][0-9]*)$/.test(text)) throw new BencodeError(`bad integer "${text.slice(0, 24)}" at byte ${start - 1}`);
    const n = Number(text);
    if (!Number.isSafeInteger(n)) throw new BencodeError(`integer out of range at byte ${start - 1}`);
    this.pos = end + 1;
    return n;
  }

  private bytes(): Buffer {
    const start = this.pos;
    const colon = this.buf.indexOf(C_COLON, start);
    if (colon < 0 || colon - start > 16) throw new BencodeError(`bad string length at byte ${start}`);
    const text = this.buf.toString('latin1', start, colon);
    if (!/^(0|[1-9][0-9]*)$/.test(text)) throw new BencodeError(`bad string length "${text}" at byte ${start}`);
    const len = Number(text);
    const from = colon + 1;
    if (from + len > this.buf.length) throw new BencodeError(`string of ${len} bytes runs past the end at byte ${start}`);
    this.pos = from + len;
    return this.buf.subarray(from, from + len);
  }

  private list(depth: number): BValue[] {
    this.pos++;
    const out: BValue[] = [];
    while (this.buf[this.pos] !== C_E) {
      if (this.pos >= this.buf.length) throw new BencodeError('unterminated list');
      out.push(this.value(depth + 1));
    }
    this.pos++;
    return out;
  }

  private dict(depth: number): BDict {
    const start = this.pos++;
    const entries = new Map<string, BValue>();
    while (this.buf[this.pos] !== C_E) {
      if (this.pos >= this.buf.length) throw new BencodeError('unterminated dictionary');
      const c = this.buf[this.pos]!;
      if (c < 0x30 || c > 0x39) throw new BencodeError(`dictionary key is not a string at byte ${this.pos}`);
      const key = this.bytes();
      const name = key.toString('latin1');
      if (entries.has(name)) throw new BencodeError(`repeated dictionary key at byte ${this.pos}`);
      entries.set(name, this.value(depth + 1));
    }
    this.pos++;
    return { entries, span: [start, this.pos] };
  }
}
