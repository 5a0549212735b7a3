import type { SFTPWrapper } from 'ssh2';
import type { Logger } from '../../logger.js';

/**
 * OpenSSH extensions Atrium answers, advertised in its VERSION packet (a client asks only for
 * what the server advertised). `hardlink@openssh.com` is not among them: storages have no links.
 */
export const EXTENSIONS: Array<[string, string]> = [
  ['posix-rename@openssh.com', '1'],
  ['statvfs@openssh.com', '2'],
  ['fstatvfs@openssh.com', '2'],
  ['limits@openssh.com', '1'],
];

/**
 * The largest SFTP packet Atrium takes (ssh2's limit for incoming packets, as OpenSSH's) and the
 * most data one WRITE carries or one READ answers (a longer read gets this much, as from OpenSSH).
 */
export const MAX_PACKET = 256 * 1024;
export const MAX_DATA = MAX_PACKET - 1024;

/**
 * The read length told to clients. OpenSSH's sftp takes the lengths of `limits@openssh.com` for
 * its requests (64 in flight): writes of 255 KiB need 8 times fewer answers than 32 KiB ones, but
 * 64 answers of 255 KiB to reads outrun the client's channel window (2 MiB) and wait, promoted to
 * V8's old space, in ssh2's queue: twice the CPU per byte of 32 KiB reads. 64 KiB reads cost as
 * much as 32 KiB ones, in half the requests.
 */
export const READ_LENGTH = 64 * 1024;

/** The `limits@openssh.com` answer: packet, read and write lengths, open handles (0: no limit of its own). */
export function limitsBody(): Buffer {
  const buf = Buffer.alloc(32);
  [MAX_PACKET, READ_LENGTH, MAX_DATA, 0].forEach((n, i) => buf.writeBigUInt64BE(BigInt(n), i * 8));
  return buf;
}

const VERSION = 2;
const EXTENDED_REPLY = 201;
/** The VERSION packet ssh2 1.17's server always sends: length 5, type 2, version 3, no extensions. */
const PLAIN_VERSION = Buffer.from([0, 0, 0, 5, VERSION, 0, 0, 0, 3]);

/** The parts of ssh2's SFTP object (lib/protocol/SFTP.js) the shim and the DataSender rely on. */
export interface Internals {
  _protocol: { channelData(id: number, data: Buffer): void };
  outgoing: { id: number; state: string; window: number; packetSize: number };
  _buffer: Buffer[];
}

let warned = false;

/** ssh2's internals when they look as expected, else undefined (logged once per process). */
export function internalsOf(sftp: SFTPWrapper, log: Logger): Internals | undefined {
  const s = sftp as unknown as Partial<Internals>;
  const ok =
    typeof s._protocol?.channelData === 'function' &&
    typeof s.outgoing?.id === 'number' &&
    typeof s.outgoing.window === 'number' &&
    typeof s.outgoing.packetSize === 'number' &&
    Array.isArray(s._buffer);
  if (ok) return s as Internals;
  if (!warned) log.warn('ssh2 internals differ from what the SFTP shims expect: OpenSSH extensions (statvfs) are not offered, reads are answered through sftp.data()');
  warned = true;
  return undefined;
}

function versionPacket(): Buffer {
  const parts = [Buffer.from([VERSION, 0, 0, 0, 3])];
  for (const pair of EXTENSIONS) {
    for (const s of pair) {
      const len = Buffer.alloc(4);
      len.writeUInt32BE(Buffer.byteLength(s));
      parts.push(len, Buffer.from(s));
    }
  }
  const body = Buffer.concat(parts);
  const head = Buffer.alloc(4);
  head.writeUInt32BE(body.length);
  return Buffer.concat([head, body]);
}

/**
 * Makes an SFTP channel's VERSION reply list `EXTENSIONS`. Why a shim: ssh2 1.17's server answers
 * INIT with a constant 9-byte VERSION packet (SERVER_VERSION_BUFFER) and has no option to add
 * extension pairs, so OpenSSH's `df` and ssh2's `ext_openssh_statvfs` would never be tried.
 * ssh2 writes that packet through `sendOrBuffer`, which charges its 9 bytes to the channel's
 * outgoing window and passes it whole to `_protocol.channelData`. For this channel only and
 * only until the VERSION is sent, `channelData` is wrapped: the 9-byte packet is swapped for the
 * longer one and the extra bytes are charged to the window, keeping flow control exact. When the
 * window or packet size can not take the longer packet, or ssh2's internals differ, the plain
 * packet goes out unchanged (the session works, without the extensions). Returns whether the
 * extensions will be offered.
 */
export function advertiseExtensions(sftp: SFTPWrapper, log: Logger): boolean {
  const internals = internalsOf(sftp, log);
  if (!internals) return false;
  const proto = internals._protocol;
  // Another channel of the same connection is being set up: it goes without the extensions.
  if (Object.prototype.hasOwnProperty.call(proto, 'channelData')) return false;
  const original = proto.channelData;
  const restore = () => {
    if (proto.channelData === wrapped) delete (proto as Partial<Internals['_protocol']>).channelData;
  };
  const wrapped = function (this: unknown, id: number, data: Buffer) {
    const out = internals.outgoing;
    if (id === out.id && data.equals(PLAIN_VERSION)) {
      restore();
      const packet = versionPacket();
      const extra = packet.length - data.length;
      if (out.window > extra && packet.length <= out.packetSize) {
        out.window -= extra;
        return original.call(this, id, packet);
      }
    }
    return original.call(this, id, data);
  };
  proto.channelData = wrapped;
  // ssh2 emits 'ready' right after sending VERSION: by then the wrapper has done its work.
  sftp.once('ready', restore);
  sftp.once('close', restore);
  return true;
}

/**
 * Sends an EXTENDED_REPLY packet (ssh2's server has no method for one), through the channel's
 * flow control as ssh2's own `sendOrBuffer` does: queued behind packets waiting for window, sent
 * at once when the window takes it, else retried once the client has opened the window.
 */
export function sendExtendedReply(sftp: SFTPWrapper, reqId: number, body: Buffer, log: Logger): boolean {
  const internals = internalsOf(sftp, log);
  if (!internals) return false;
  const packet = Buffer.alloc(9 + body.length);
  packet.writeUInt32BE(5 + body.length, 0);
  packet[4] = EXTENDED_REPLY;
  packet.writeUInt32BE(reqId, 5);
  body.copy(packet, 9);
  const send = () => {
    const out = internals.outgoing;
    if (out.state !== 'open') return;
    if (internals._buffer.length > 0) internals._buffer.push(packet);
    else if (out.window >= packet.length && packet.length <= out.packetSize) {
      out.window -= packet.length;
      internals._protocol.channelData(out.id, packet);
    } else setTimeout(send, 10);
  };
  send();
  return true;
}

/** File system figures as `statvfs@openssh.com` answers them (all uint64). */
export interface VfsStats {
  bsize: number;
  frsize: number;
  blocks: number;
  bfree: number;
  bavail: number;
  files: number;
  ffree: number;
  favail: number;
  fsid: number;
  flag: number;
  namemax: number;
}

/** ST_RDONLY and ST_NOSUID, as OpenSSH sends them. */
export const VFS_FLAG = { RDONLY: 1, NOSUID: 2 } as const;

export function statvfsBody(v: VfsStats): Buffer {
  const values = [v.bsize, v.frsize, v.blocks, v.bfree, v.bavail, v.files, v.ffree, v.favail, v.fsid, v.flag, v.namemax];
  const buf = Buffer.alloc(values.length * 8);
  values.forEach((n, i) => buf.writeBigUInt64BE(BigInt(Math.max(0, Math.floor(n))), i * 8));
  return buf;
}
