import { createHash } from 'node:crypto';
import { BadRequest, TooLarge } from '../errors.js';
import { BencodeError, type BDict, type BValue, bdecode, isDict } from '../util/bencode.js';

/**
 * What `/api/fs/torrent/parse` answers (OpenList's ParseTorrentResp): a torrent's name, sizes,
 * info hash (hex SHA-1 of the bencoded `info` dictionary, as sent) and files, and the `x-cas`
 * extension OpenList reads for the 189 Cloud's "rapid upload" (`has_cas`, `cas`).
 */
export interface TorrentInfo {
  name: string;
  total_size: number;
  piece_length: number;
  piece_count: number;
  info_hash: string;
  files: Array<{ path: string; size: number }>;
  has_cas: boolean;
  cas?: { file_md5: string; slice_md5: string; slice_size: number; cloud: string };
}

/** OpenList's bounds: the base64 text ≤ 14 MiB, the torrent itself ≤ 10 MiB. */
export const MAX_TORRENT_BASE64 = 14 * 1024 * 1024;
export const MAX_TORRENT_BYTES = 10 * 1024 * 1024;
/** Atrium's: files listed in one torrent, and nesting of its bencoding. */
export const MAX_TORRENT_FILES = 100_000;
const MAX_DEPTH = 16;

const fail = (why: string) => new BadRequest(`failed to parse torrent: ${why}`);
const text = (v: BValue | undefined): string => (Buffer.isBuffer(v) ? v.toString('utf8') : '');
const int = (v: BValue | undefined): number | undefined => (typeof v === 'number' ? v : undefined);

/** The bytes of `torrent_data` (strict base64, as Go's StdEncoding), within the bounds. */
export function decodeTorrentData(b64: string, tooLarge: 'bad-request' | 'too-large' = 'bad-request'): Buffer {
  if (b64.length > MAX_TORRENT_BASE64) {
    if (tooLarge === 'too-large') throw new TooLarge('torrent data exceeds the maximum size');
    throw new BadRequest('torrent data too large (10 MiB at most)');
  }
  if (b64.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(b64)) throw new BadRequest('invalid Base64 encoding');
  return Buffer.from(b64, 'base64');
}

/** Reads a `.torrent` file: a BEP 3 metainfo dictionary with an `info` dictionary. */
export function parseTorrent(file: Buffer): TorrentInfo {
  if (file.length > MAX_TORRENT_BYTES) throw fail('the file is larger than 10 MiB');
  let root: BValue;
  try {
    root = bdecode(file, { maxDepth: MAX_DEPTH, maxItems: MAX_TORRENT_FILES * 8 });
  } catch (err) {
    if (err instanceof BencodeError) throw fail(err.message);
    throw err;
  }
  if (!isDict(root)) throw fail('not a bencoded dictionary');
  const info = root.entries.get('info');
  if (!isDict(info)) throw fail('missing info dictionary');
  const pieces = info.entries.get('pieces');
  const pieceLength = int(info.entries.get('piece length'));
  if (!Buffer.isBuffer(pieces)) throw fail('missing pieces');
  if (pieces.length % 20 !== 0) throw new BadRequest('torrent pieces data invalid: its length must be a multiple of 20');
  if (pieceLength === undefined || pieceLength <= 0) throw fail('missing or bad piece length');
  const name = text(info.entries.get('name.utf-8') ?? info.entries.get('name'));
  const files = torrentFiles(info, name);
  return {
    name,
    total_size: files.reduce((n, f) => n + f.size, 0),
    piece_length: pieceLength,
    piece_count: pieces.length / 20,
    info_hash: createHash('sha1').update(file.subarray(info.span[0], info.span[1])).digest('hex'),
    files,
    ...casOf(root),
  };
}

/** The files of a multi-file torrent (`files`), or the one file of a single-file torrent (`name`, `length`). */
function torrentFiles(info: BDict, name: string): TorrentInfo['files'] {
  const list = info.entries.get('files');
  if (list === undefined) {
    const length = int(info.entries.get('length'));
    if (length === undefined || length < 0) throw fail('a single-file torrent needs a length');
    return [{ path: name, size: length }];
  }
  if (!Array.isArray(list) || list.length === 0) throw fail('files must be a non-empty list');
  if (list.length > MAX_TORRENT_FILES) throw fail(`more than ${MAX_TORRENT_FILES} files`);
  return list.map((f, i) => {
    if (!isDict(f)) throw fail(`file ${i} is not a dictionary`);
    const length = int(f.entries.get('length'));
    const segs = f.entries.get('path.utf-8') ?? f.entries.get('path');
    if (length === undefined || length < 0) throw fail(`file ${i} has no length`);
    if (!Array.isArray(segs) || segs.length === 0 || !segs.every(Buffer.isBuffer)) throw fail(`file ${i} has no path`);
    const parts = segs.map((s) => text(s));
    if (parts.some((p) => p === '' || p === '.' || p === '..' || p.includes('/') || p.includes('\\') || p.includes('\0'))) {
      throw fail(`file ${i} has an unsafe path`);
    }
    return { path: parts.join('/'), size: length };
  });
}

/** OpenList's `x-cas` extension: present when both MD5s are. */
function casOf(root: BDict): Pick<TorrentInfo, 'has_cas' | 'cas'> {
  const x = root.entries.get('x-cas');
  if (!isDict(x)) return { has_cas: false };
  const cas = {
    file_md5: text(x.entries.get('file_md5')),
    slice_md5: text(x.entries.get('slice_md5')),
    slice_size: int(x.entries.get('slice_size')) ?? 0,
    cloud: text(x.entries.get('cloud')),
  };
  return cas.file_md5 && cas.slice_md5 ? { has_cas: true, cas } : { has_cas: false };
}

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

function base32ToHex(s: string): string | undefined {
  let bits = '';
  for (const c of s.toUpperCase()) {
    const v = BASE32.indexOf(c);
    if (v < 0) return undefined;
    bits += v.toString(2).padStart(5, '0');
  }
  const bytes = bits.match(/.{8}/g) ?? [];
  return Buffer.from(bytes.map((b) => parseInt(b, 2))).toString('hex');
}

/**
 * A magnet link (BEP 9) in the same shape: its `xt=urn:btih:` hash (hex or base32), the name of
 * `dn` and the size of `xl` when given; a magnet names no files, so `files` holds one entry
 * named by `dn` when there is one (the tool learns the rest from its peers).
 */
export function parseMagnet(link: string): TorrentInfo {
  if (link.length > 64 * 1024) throw new BadRequest('failed to parse magnet: longer than 64 KiB');
  let url: URL;
  try {
    url = new URL(link.trim());
  } catch {
    throw new BadRequest('failed to parse magnet: not a URL');
  }
  if (url.protocol !== 'magnet:') throw new BadRequest('failed to parse magnet: not a magnet: link');
  const xt = url.searchParams.getAll('xt').find((v) => v.toLowerCase().startsWith('urn:btih:'));
  if (!xt) throw new BadRequest('failed to parse magnet: no xt=urn:btih: hash');
  const raw = xt.slice('urn:btih:'.length);
  const hash = /^[0-9a-f]{40}$/i.test(raw) ? raw.toLowerCase() : /^[a-z2-7]{32}$/i.test(raw) ? base32ToHex(raw) : undefined;
  if (!hash) throw new BadRequest('failed to parse magnet: the btih hash is neither 40 hex nor 32 base32 characters');
  const name = url.searchParams.get('dn') ?? '';
  const xl = Number(url.searchParams.get('xl') ?? '0');
  const size = Number.isSafeInteger(xl) && xl > 0 ? xl : 0;
  return { name: name || hash, total_size: size, piece_length: 0, piece_count: 0, info_hash: hash, files: name ? [{ path: name, size }] : [], has_cas: false };
}
