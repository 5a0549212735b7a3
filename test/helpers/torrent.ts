import { createHash } from 'node:crypto';

type Bencodable = number | string | Buffer | Bencodable[] | { [key: string]: Bencodable };

/** BEP 3 bencoding (dictionary keys sorted as raw bytes). */
export function bencode(v: Bencodable): Buffer {
  if (typeof v === 'number') return Buffer.from(`i${Math.trunc(v)}e`);
  if (typeof v === 'string') return bencode(Buffer.from(v));
  if (Buffer.isBuffer(v)) return Buffer.concat([Buffer.from(`${v.length}:`), v]);
  if (Array.isArray(v)) return Buffer.concat([Buffer.from('l'), ...v.map(bencode), Buffer.from('e')]);
  const keys = Object.keys(v).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  return Buffer.concat([Buffer.from('d'), ...keys.flatMap((k) => [bencode(k), bencode(v[k]!)]), Buffer.from('e')]);
}

export interface Torrent {
  /** The .torrent file. */
  file: Buffer;
  infoHash: string;
}

/**
 * A single-file torrent without trackers whose only source is an HTTP web seed (BEP 19), so a
 * torrent client on loopback can complete it from the test's own file server, with no peers.
 */
export function makeTorrent(name: string, content: Buffer, webSeed: string, pieceLength = 256 * 1024): Torrent {
  const pieces: Buffer[] = [];
  for (let off = 0; off < content.length; off += pieceLength) {
    pieces.push(createHash('sha1').update(content.subarray(off, off + pieceLength)).digest());
  }
  const info = { name, length: content.length, 'piece length': pieceLength, pieces: Buffer.concat(pieces), private: 0 };
  const infoHash = createHash('sha1').update(bencode(info)).digest('hex');
  return { file: bencode({ info, 'url-list': [webSeed], 'creation date': 1_700_000_000 }), infoHash };
}
