/**
 * A small writer of RAR archives with stored (method 0, uncompressed) entries, for test
 * fixtures: no Debian tool writes rar. It follows the published format notes:
 *
 * - RAR 5.0 (rarlab's "RAR 5.0 archive format" technote): the 8-byte signature, then blocks of
 *   `header CRC32 | header size (vint) | type | flags | [extra size] | [data size] | fields |
 *   extra area`, the data area after the header; main (1), file (2) and end-of-archive (5)
 *   headers. With a password, each file carries a file encryption record (AES-256-CBC, key by
 *   PBKDF2-HMAC-SHA256 with 2^15 rounds, and the password check value: so a wrong password is
 *   known before reading any data); `encryptHeaders` adds the archive encryption header (type 4)
 *   and every later header is then stored as a 16-byte IV and the header encrypted with AES.
 * - RAR 1.5–4.x (its technote.txt): the 7-byte marker, then blocks of `HEAD_CRC (low 16 bits
 *   of CRC32) | HEAD_TYPE | HEAD_FLAGS | HEAD_SIZE | …`: archive header (0x73), file headers
 *   (0x74) with the packed data after them, end of archive (0x7B). No encryption (RAR 4's
 *   scheme is not written here).
 *
 * Every archive this writes is checked by the tests with an independent reader (bsdtar, 7-Zip)
 * before it is used.
 */
import { createCipheriv, createHash, pbkdf2Sync, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

export interface RarEntry {
  /** Inner path with `/` separators; a trailing `/` or `dir: true` makes a folder. */
  name: string;
  body?: Buffer;
  dir?: boolean;
  mtime?: Date;
}

const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n >>> 0);
  return b;
};
const u16 = (n: number) => {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(n & 0xffff);
  return b;
};

/** RAR 5 variable-length integer: 7 bits a byte, lowest first, the high bit says more follow. */
export function vint(n: number): Buffer {
  const out: number[] = [];
  let v = n;
  do {
    let byte = v % 128;
    v = Math.floor(v / 128);
    if (v > 0) byte |= 0x80;
    out.push(byte);
  } while (v > 0);
  return Buffer.from(out);
}

// ---- RAR 5 ----

const RAR5_SIGNATURE = Buffer.from([0x52, 0x61, 0x72, 0x21, 0x1a, 0x07, 0x01, 0x00]);
const KDF_LOG2 = 15;

interface Keys {
  key: Buffer;
  salt: Buffer;
  /** 8-byte password check value and the first 4 bytes of its SHA-256. */
  check: Buffer;
}

/** Key and password check value of RAR 5: PBKDF2-HMAC-SHA256 stopped at 2^n, and at 2^n + 32 rounds folded to 8 bytes. */
function rar5Keys(password: string, salt = randomBytes(16)): Keys {
  const rounds = 2 ** KDF_LOG2;
  const key = pbkdf2Sync(password, salt, rounds, 32, 'sha256');
  const v2 = pbkdf2Sync(password, salt, rounds + 32, 32, 'sha256');
  const psw = Buffer.alloc(8);
  for (let i = 0; i < 32; i++) psw[i % 8]! ^= v2[i]!;
  const sum = createHash('sha256').update(psw).digest().subarray(0, 4);
  return { key, salt, check: Buffer.concat([psw, sum]) };
}

/** AES-256-CBC without padding of its own: the input is zero-padded to 16 bytes. */
function aes(key: Buffer, iv: Buffer, data: Buffer): Buffer {
  const padded = Buffer.concat([data, Buffer.alloc((16 - (data.length % 16)) % 16)]);
  const c = createCipheriv('aes-256-cbc', key, iv);
  c.setAutoPadding(false);
  return Buffer.concat([c.update(padded), c.final()]);
}

/** One RAR 5 header block: CRC32 over the size field and the header data. */
function block5(type: number, flags: number, fields: Buffer, extra?: Buffer, dataSize?: number): Buffer {
  let hflags = flags;
  if (extra?.length) hflags |= 0x0001;
  if (dataSize !== undefined) hflags |= 0x0002;
  const body = Buffer.concat([
    vint(type),
    vint(hflags),
    ...(extra?.length ? [vint(extra.length)] : []),
    ...(dataSize !== undefined ? [vint(dataSize)] : []),
    fields,
    ...(extra?.length ? [extra] : []),
  ]);
  const sized = Buffer.concat([vint(body.length), body]);
  return Buffer.concat([u32(crc32(sized)), sized]);
}

/** An extra-area record: size (of type and data), type, data. */
const record = (type: number, data: Buffer) => {
  const body = Buffer.concat([vint(type), data]);
  return Buffer.concat([vint(body.length), body]);
};

export interface Rar5Options {
  /** Encrypts every file's data with this password (AES-256, with a password check value). */
  password?: string;
  /** Also encrypts the headers (file names): listing needs the password (like `rar -hp`). */
  encryptHeaders?: boolean;
}

/** A RAR 5.0 archive of the entries, stored (not compressed). */
export function rar5(entries: RarEntry[], opts: Rar5Options = {}): Buffer {
  const parts: Buffer[] = [RAR5_SIGNATURE];
  const headerKeys = opts.password && opts.encryptHeaders ? rar5Keys(opts.password) : undefined;
  /** A header as written: plain, or IV + encrypted once the archive encryption header is out. */
  const put = (header: Buffer) => {
    if (!headerKeys) return parts.push(header);
    const iv = randomBytes(16);
    parts.push(iv, aes(headerKeys.key, iv, header));
  };
  if (headerKeys) {
    parts.push(block5(4, 0, Buffer.concat([vint(0), vint(0x0001), Buffer.from([KDF_LOG2]), headerKeys.salt, headerKeys.check])));
  }
  put(block5(1, 0, vint(0)));
  for (const e of entries) {
    const dir = e.dir || e.name.endsWith('/');
    const name = Buffer.from(e.name.replace(/\/+$/, ''), 'utf8');
    const body = dir ? Buffer.alloc(0) : (e.body ?? Buffer.alloc(0));
    const mtime = Math.floor((e.mtime ?? new Date('2024-05-06T07:08:09Z')).getTime() / 1000);
    const fileFlags = (dir ? 0x0001 : 0x0004) | 0x0002;
    let data = body;
    let extra: Buffer | undefined;
    if (opts.password && !dir) {
      // Each file its own salt and IV, as rar does; the data CRC stays the plain CRC32 (no tweaked checksums).
      const k = rar5Keys(opts.password);
      const iv = randomBytes(16);
      extra = record(0x01, Buffer.concat([vint(0), vint(0x0001), Buffer.from([KDF_LOG2]), k.salt, iv, k.check]));
      data = aes(k.key, iv, body);
    }
    const fields = Buffer.concat([
      vint(fileFlags),
      vint(body.length),
      vint(dir ? 0o40755 : 0o100644),
      u32(mtime),
      ...(dir ? [] : [u32(crc32(body))]),
      vint(0), // compression: version 0, method 0 (store)
      vint(1), // host OS: Unix
      vint(name.length),
      name,
    ]);
    put(block5(2, 0, fields, extra, data.length));
    if (!dir) parts.push(data);
  }
  put(block5(5, 0, vint(0)));
  return Buffer.concat(parts);
}

// ---- RAR 1.5–4.x ----

const RAR4_MARKER = Buffer.from([0x52, 0x61, 0x72, 0x21, 0x1a, 0x07, 0x00]);

/** One RAR 4 block: HEAD_CRC is the low 16 bits of the CRC32 of the header from HEAD_TYPE on. */
function block4(type: number, flags: number, rest: Buffer): Buffer {
  const head = Buffer.concat([Buffer.from([type]), u16(flags), u16(7 + rest.length), rest]);
  return Buffer.concat([u16(crc32(head) & 0xffff), head]);
}

/** MS-DOS date and time (local fields of the UTC date, as the tests compare names and bytes only). */
function dosTime(d: Date): number {
  return (
    (((d.getUTCFullYear() - 1980) << 25) | ((d.getUTCMonth() + 1) << 21) | (d.getUTCDate() << 16) | (d.getUTCHours() << 11) | (d.getUTCMinutes() << 5) | (d.getUTCSeconds() >> 1)) >>> 0
  );
}

/** A RAR 4 (1.5–4.x format) archive of the entries, stored (method 0x30), names in ASCII with `/`. */
export function rar4(entries: RarEntry[]): Buffer {
  const parts: Buffer[] = [RAR4_MARKER, block4(0x73, 0, Buffer.alloc(6))];
  for (const e of entries) {
    const dir = e.dir || e.name.endsWith('/');
    const name = Buffer.from(e.name.replace(/\/+$/, ''), 'latin1');
    const body = dir ? Buffer.alloc(0) : (e.body ?? Buffer.alloc(0));
    const rest = Buffer.concat([
      u32(body.length), // PACK_SIZE (the block's ADD_SIZE)
      u32(body.length), // UNP_SIZE
      Buffer.from([3]), // HOST_OS: Unix
      u32(dir ? 0 : crc32(body)),
      u32(dosTime(e.mtime ?? new Date('2024-05-06T07:08:08Z'))),
      Buffer.from([20]), // UNP_VER 2.0
      Buffer.from([0x30]), // METHOD: store
      u16(name.length),
      u32(dir ? 0o40755 : 0o100644),
      name,
    ]);
    // 0x8000: ADD_SIZE present; 0x00E0: the "dictionary" bits that mark a folder.
    parts.push(block4(0x74, 0x8000 | (dir ? 0x00e0 : 0), rest), body);
  }
  parts.push(block4(0x7b, 0x4000, Buffer.alloc(0)));
  return Buffer.concat(parts);
}
