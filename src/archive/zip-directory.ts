import { isUtf8 } from 'node:buffer';
import { crc32 } from 'node:zlib';
import { BadRequest } from '../errors.js';
import type { ByteSource } from './source.js';

/**
 * A zip's central directory, read with ranged reads and parsed as it streams in (APPNOTE.TXT
 * 4.3.12–4.3.16): only a compact record is kept per entry, never the directory whole, so a
 * 100 000-entry zip is listed in a few MB. The entries' bytes are read elsewhere (zip.ts:
 * Node's zlib for stored and deflated entries, zip.js for encrypted ones).
 */
export interface ZipRecord {
  /** The name as decoded (UTF-8 flag, Info-ZIP Unicode path, else the configured encoding). */
  name: string;
  method: number;
  flags: number;
  crc: number;
  compressedSize: number;
  size: number;
  /** Where the entry's local header starts. */
  localOffset: number;
  /** Where this record starts in the archive, and its length (to hand it to zip.js alone). */
  cdOffset: number;
  cdLength: number;
  externalAttributes: number;
  madeBy: number;
  modified: number;
}

export interface ZipDirectory {
  comment: string;
  entries: number;
  /**
   * Streams the records, in order, to `visit`. The record object is reused from one call to the
   * next (no garbage per entry): `visit` copies what it keeps.
   */
  walk(visit: (r: Readonly<ZipRecord>) => void): Promise<void>;
}

const EOCD = 0x06054b50;
const ZIP64_LOCATOR = 0x07064b50;
const ZIP64_EOCD = 0x06064b50;
const CENTRAL = 0x02014b50;
const MAX16 = 0xffff;
const MAX32 = 0xffffffff;

/** IBM437, the zip default for names not flagged UTF-8: bytes 128–255 (0–127 are ASCII). */
const CP437_HIGH =
  'ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜ¢£¥₧ƒáíóúñÑªº¿⌐¬½¼¡«»░▒▓│┤╡╢╖╕╣║╗╝╜╛┐└┴┬├─┼╞╟╚╔╩╦╠═╬╧╨╤╥╙╘╒╓╫╪┘┌█▄▌▐▀αßΓπΣσµτΦΘΩδ∞φε∩≡±≥≤⌠⌡÷≈°∙·√ⁿ²■\u00a0';
const cp437 = (b: Uint8Array) => {
  let s = '';
  for (const c of b) s += c < 128 ? String.fromCharCode(c) : CP437_HIGH[c - 128];
  return s;
};

/** Names and the comment: UTF-8 when flagged (or valid UTF-8 with no encoding set), else `encoding`, else IBM437. */
function decoderOf(encoding: string): (raw: Buffer, utf8: boolean) => string {
  let legacy: TextDecoder | undefined;
  if (encoding) {
    try {
      legacy = new TextDecoder(encoding);
    } catch {
      throw new BadRequest(`unknown name encoding (setting non_efs_zip_encoding): ${encoding}`);
    }
  }
  return (raw, utf8) => {
    if (utf8 || (!legacy && isUtf8(raw))) return raw.toString('utf8');
    return legacy ? legacy.decode(raw) : cp437(raw);
  };
}

export const asBuffer = (u: Uint8Array) => Buffer.from(u.buffer, u.byteOffset, u.length);

/** MS-DOS date and time, read as local time (as unzip does). */
function dosDate(date: number, time: number): number {
  if (date === 0) return 0;
  return new Date(1980 + (date >> 9), ((date >> 5) & 15) - 1, date & 31, time >> 11, (time >> 5) & 63, (time & 31) * 2).getTime();
}

/** Opens the directory: finds the end record (and its zip64 form); the records stream on `walk`. */
export async function readZipDirectory(source: ByteSource, encoding: string): Promise<ZipDirectory> {
  const decode = decoderOf(encoding);
  const size = source.size;
  const tailLength = Math.min(size, 22 + MAX16);
  if (tailLength < 22) throw new BadRequest('not a readable zip archive: too short');
  const tail = asBuffer(await source.read(size - tailLength, tailLength));
  let at = -1;
  for (let i = tail.length - 22; i >= 0; i--) {
    if (tail.readUInt32LE(i) === EOCD && i + 22 + tail.readUInt16LE(i + 20) <= tail.length) {
      at = i;
      break;
    }
  }
  if (at < 0) throw new BadRequest('not a readable zip archive: no end of central directory');
  const eocdPos = size - tailLength + at;
  let entries = tail.readUInt16LE(at + 10);
  let cdSize = tail.readUInt32LE(at + 12);
  let cdOffset = tail.readUInt32LE(at + 16);
  const comment = decode(tail.subarray(at + 22, at + 22 + tail.readUInt16LE(at + 20)), false);
  /** Where the directory ends: the end record, or the zip64 end record before it. */
  let cdEnd = eocdPos;
  if (entries === MAX16 || cdSize === MAX32 || cdOffset === MAX32) {
    const locator = eocdPos >= 20 ? asBuffer(await source.read(eocdPos - 20, 20)) : Buffer.alloc(0);
    if (locator.length === 20 && locator.readUInt32LE(0) === ZIP64_LOCATOR) {
      const pos = Number(locator.readBigUInt64LE(8));
      const z = asBuffer(await source.read(pos, 56));
      if (z.readUInt32LE(0) !== ZIP64_EOCD) throw new BadRequest('not a readable zip archive: bad zip64 end record');
      entries = Number(z.readBigUInt64LE(32));
      cdSize = Number(z.readBigUInt64LE(40));
      cdOffset = Number(z.readBigUInt64LE(48));
      cdEnd = pos;
    }
  }
  // Data prepended to the zip (self-extractors) shifts every offset by the same amount.
  const shift = cdEnd - cdSize >= 0 && cdEnd - cdSize !== cdOffset ? cdEnd - cdSize - cdOffset : 0;
  const start = cdOffset + shift;
  if (start < 0 || start + cdSize > size) throw new BadRequest('not a readable zip archive: central directory out of range');

  const walk = async (visit: (r: Readonly<ZipRecord>) => void): Promise<void> => {
    if (cdSize === 0) return;
    const r: ZipRecord = { name: '', method: 0, flags: 0, crc: 0, compressedSize: 0, size: 0, localOffset: 0, cdOffset: 0, cdLength: 0, externalAttributes: 0, madeBy: 0, modified: 0 };
    /** The start of a record cut by the end of a chunk (copied, so the chunk itself is let go). */
    let carry: Buffer | undefined;
    let pos = start;
    let seen = 0;
    const emit = (record: Buffer) => {
      visit(parseRecord(r, record, pos, shift, decode));
      seen++;
      pos += record.length;
    };
    const lengthOf = (b: Buffer, at: number) => 46 + b.readUInt16LE(at + 28) + b.readUInt16LE(at + 30) + b.readUInt16LE(at + 32);
    for await (const c of await source.stream(start, start + cdSize - 1)) {
      let chunk = c as Buffer;
      if (carry) {
        // Complete the cut record from the head of this chunk.
        const head = carry.length >= 46 ? carry : Buffer.concat([carry, chunk.subarray(0, 46 - carry.length)]);
        if (head.length < 46) {
          carry = head;
          continue;
        }
        if (head.readUInt32LE(0) !== CENTRAL) throw new BadRequest('not a readable zip archive: bad central directory record');
        const take = lengthOf(head, 0) - carry.length;
        if (chunk.length < take) {
          carry = Buffer.concat([carry, chunk]);
          continue;
        }
        emit(Buffer.concat([carry, chunk.subarray(0, take)]));
        chunk = chunk.subarray(take);
        carry = undefined;
      }
      let p = 0;
      while (chunk.length - p >= 46) {
        if (chunk.readUInt32LE(p) !== CENTRAL) throw new BadRequest('not a readable zip archive: bad central directory record');
        const length = lengthOf(chunk, p);
        if (chunk.length - p < length) break;
        emit(chunk.subarray(p, p + length));
        p += length;
      }
      if (p < chunk.length) carry = Buffer.from(chunk.subarray(p));
    }
    if (seen < entries && entries !== MAX16) throw new BadRequest('not a readable zip archive: central directory ended early');
  };
  return { comment, entries, walk };
}

function parseRecord(r: ZipRecord, b: Buffer, cdOffset: number, shift: number, decode: (raw: Buffer, utf8: boolean) => string): ZipRecord {
  const flags = b.readUInt16LE(8);
  const nameLen = b.readUInt16LE(28);
  const extraLen = b.readUInt16LE(30);
  const rawName = b.subarray(46, 46 + nameLen);
  let name: string | undefined;
  let size = b.readUInt32LE(24);
  let compressedSize = b.readUInt32LE(20);
  let localOffset = b.readUInt32LE(42);
  let modified = dosDate(b.readUInt16LE(14), b.readUInt16LE(12));
  for (let i = 46 + nameLen, end = 46 + nameLen + extraLen; i + 4 <= end; ) {
    const id = b.readUInt16LE(i);
    const len = Math.min(b.readUInt16LE(i + 2), end - i - 4);
    const at = i + 4;
    i = at + len;
    if (id === 0x0001) {
      // zip64: the fields that are 0xFFFFFFFF in the record, in this order.
      let o = at;
      const next = (v: number) => {
        if (v !== MAX32) return v;
        const got = o + 8 <= at + len ? Number(b.readBigUInt64LE(o)) : v;
        o += 8;
        return got;
      };
      size = next(size);
      compressedSize = next(compressedSize);
      localOffset = next(localOffset);
    } else if (id === 0x7075 && len > 5 && b[at] === 1 && b.readUInt32LE(at + 1) === crc32(rawName)) {
      // Info-ZIP Unicode path: the UTF-8 name, valid while the CRC of the plain name matches.
      name = b.toString('utf8', at + 5, at + len);
    } else if (id === 0x5455 && len >= 5 && (b[at]! & 1)) {
      // Extended timestamp: the modification time in UTC seconds.
      modified = b.readUInt32LE(at + 1) * 1000;
    }
  }
  r.name = name ?? decode(rawName, (flags & 0x0800) !== 0);
  r.method = b.readUInt16LE(10);
  r.flags = flags;
  r.crc = b.readUInt32LE(16);
  r.compressedSize = compressedSize;
  r.size = size;
  r.localOffset = localOffset + shift;
  r.cdOffset = cdOffset;
  r.cdLength = b.length;
  r.externalAttributes = b.readUInt32LE(38);
  r.madeBy = b.readUInt16LE(4);
  r.modified = modified;
  return r;
}
