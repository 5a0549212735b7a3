import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { BadRequest, isAbort, isKind, Upstream } from '../../errors.js';
import { lazyRequire } from '../../util/lazy-require.js';
import { checkSegment, isUploadTemp, ObjectExists, peerPath, PermissionDenied, Reconnecting, rootOf, uploadTempName } from '../peer.js';
import { splitHostPort } from '../host-port.js';
import {
  defineDriver,
  type Driver,
  type Link,
  ObjectNotFound,
  type Obj,
  type UploadStream,
} from '../types.js';
import { CheckedStream } from '../write-file.js';
import { awaitFinalAnswers, type PendingAwareClient } from './pending.js';
import { ADDITIONAL, CONFIG } from './info.js';

// node-smb2: an SMB2/3 client whose NTLMv2 works against Samba's default `ntlm auth = ntlmv2-only`.
interface SmbEntry {
  type: 'File' | 'Directory';
  filename: string;
  fileSize: bigint;
  lastWriteTime: Date;
  creationTime: Date;
}
interface SmbResponse {
  header: { status: number };
  body: { buffer: Buffer };
}
interface SmbTree {
  request(header: { type: number }, body: Record<string, unknown>): Promise<SmbResponse>;
  createDirectory(p: string): Promise<void>;
  removeDirectory(p: string): Promise<void>;
  renameDirectory(p: string, to: string): Promise<void>;
  removeFile(p: string): Promise<void>;
  renameFile(p: string, to: string): Promise<void>;
}
interface SmbFile {
  fileSize: bigint;
  _id: Buffer;
  open(p: string): Promise<void>;
  create(p: string): Promise<void>;
  createWriteStream(): NodeJS.WritableStream;
  close(): Promise<void>;
}
interface SmbDirectory {
  open(p: string): Promise<void>;
  read(): Promise<SmbEntry[]>;
  close(): Promise<void>;
}
interface SmbClient {
  socket?: { once(e: 'close' | 'end', f: () => void): void; destroy(): void };
  /** Called by the client for socket errors (it prints them unless replaced before connecting). */
  onError: (err: Error) => void;
  responseCallbackMap: Map<bigint, (r: unknown) => void>;
  on(e: 'error', f: (err: Error) => void): void;
  authenticate(o: { domain: string; username: string; password: string; forceNtlmVersion: 'v2' }): Promise<{ connectTree(share: string): Promise<SmbTree> }>;
  close(): Promise<void>;
}
interface SmbModule {
  Client: new (host: string, o: { port: number; connectTimeout: number; requestTimeout: number }) => SmbClient;
}

const loadClient = lazyRequire<{ default: SmbModule }>('node-smb2');

/** node-smb2 prints one line to stdout at every login; stdout carries the server's log lines. */
let quieted = false;
function loadSmb(): { default: SmbModule } {
  if (!quieted) {
    quieted = true;
    const log = console.log;
    console.log = (...args: unknown[]) => {
      if (args.length === 1 && typeof args[0] === 'string' && /^Using NTLMv[12] authentication$/.test(args[0])) return;
      log(...args);
    };
  }
  return loadClient();
}
const loadFile = lazyRequire<{ default: new (tree: SmbTree) => SmbFile }>('node-smb2/dist/client/File');
const loadDirectory = lazyRequire<{ default: new (tree: SmbTree) => SmbDirectory }>('node-smb2/dist/client/Directory');

// NT status codes (MS-ERREF 2.3).
const STATUS = {
  noMoreFiles: 0x80000006,
  accessDenied: 0xc0000022,
  nameNotFound: 0xc0000034,
  nameCollision: 0xc0000035,
  nameInvalid: 0xc0000033,
  pathNotFound: 0xc000003a,
  logonFailure: 0xc000006d,
  badNetworkName: 0xc00000cc,
  fileIsADirectory: 0xc00000ba,
  notADirectory: 0xc0000103,
  directoryNotEmpty: 0xc0000101,
  connectionDisconnected: 0xc000020c,
};
const PACKET_READ = 0x0008;
/** One READ asks for this much (the client's own chunk size; Samba's max is far higher). */
const READ_CHUNK = 0x10000;
const SMB_PORT = 445;

const statusOf = (err: unknown): number | undefined => (err as SmbResponse)?.header?.status;

/** An SMB refusal as this server reports it; anything without an NT status is a connection fault. */
function smbError(err: unknown): Error {
  const status = statusOf(err);
  if (status === undefined) return err instanceof Error ? err : new Error(String(err));
  if (status === STATUS.nameNotFound || status === STATUS.pathNotFound || status === STATUS.notADirectory) return new ObjectNotFound();
  if (status === STATUS.accessDenied) return new PermissionDenied('STATUS_ACCESS_DENIED');
  if (status === STATUS.nameCollision) return new ObjectExists();
  if (status === STATUS.connectionDisconnected) return new Upstream('the SMB connection was lost');
  if (status === STATUS.nameInvalid) return new BadRequest('the name is not allowed on SMB shares (none of \\ / : * ? " < > |)');
  if (status === STATUS.logonFailure) return new Upstream('SMB login failed: STATUS_LOGON_FAILURE (wrong user name or password)');
  if (status === STATUS.badNetworkName) return new Upstream('no such share: STATUS_BAD_NETWORK_NAME');
  return new Upstream(`SMB error 0x${status.toString(16)}`);
}

interface Conn {
  client: SmbClient;
  tree: SmbTree;
}

/**
 * OpenList's SMB: a folder of an SMB2/3 share (a NAS, Windows, Samba) through node-smb2 with
 * NTLMv2. One connection per storage, opened again when it broke (a restarted server).
 */
export class SmbDriver implements Driver {
  private readonly root: string;
  private readonly conn: Reconnecting<Conn>;

  constructor(private readonly opts: Record<string, unknown>) {
    this.root = rootOf(opts.root_folder_path === '.' ? '/' : opts.root_folder_path);
    this.conn = new Reconnecting<Conn>(
      () => this.open(),
      (c) => void c.client.close().catch(() => undefined),
      (err) => (statusOf(err) === undefined || statusOf(err) === STATUS.connectionDisconnected) && !isKind(err, 'NotFound'),
    );
  }

  private async open(): Promise<Conn> {
    const { host, port } = splitHostPort(String(this.opts.address), SMB_PORT);
    const { Client } = loadSmb().default;
    const client = new Client(host, { port, connectTimeout: 10_000, requestTimeout: 30_000 });
    awaitFinalAnswers(client as unknown as PendingAwareClient);
    // A lost connection is reported here (not printed); the next operation opens a new one.
    client.onError = () => this.conn.invalidate();
    client.on('error', () => this.conn.invalidate());
    const raw = String(this.opts.username);
    const cut = raw.search(/[\\/]/);
    const domain = cut > 0 ? raw.slice(0, cut) : '';
    const username = cut > 0 ? raw.slice(cut + 1) : raw;
    try {
      const session = await client.authenticate({ domain, username, password: String(this.opts.password ?? ''), forceNtlmVersion: 'v2' });
      const tree = await session.connectTree(String(this.opts.share_name));
      // The client keeps a socket the server closed half-open and lets requests on it wait for
      // their timeout: end it at once, and fail what was waiting, so the next call reconnects.
      client.socket?.once('end', () => client.socket?.destroy());
      client.socket?.once('close', () => {
        this.conn.invalidate();
        const lost = { header: { status: STATUS.connectionDisconnected } };
        for (const [id, callback] of client.responseCallbackMap) {
          client.responseCallbackMap.delete(id);
          callback(lost);
        }
      });
      return { client, tree };
    } catch (err) {
      void client.close().catch(() => undefined);
      throw smbError(err);
    }
  }

  private async use<T>(op: (tree: SmbTree) => Promise<T>): Promise<T> {
    try {
      return await this.conn.use((c) => op(c.tree));
    } catch (err) {
      throw smbError(err);
    }
  }

  async init(): Promise<void> {
    await this.list('/');
  }

  async drop(): Promise<void> {
    await this.conn.end();
  }

  addition(): Record<string, unknown> {
    return this.opts;
  }

  /** The share path of a storage path: below the root, no leading slash (the share root is ''). */
  private remote(rel: string): string {
    return peerPath(this.root, rel).replace(/^\/+/, '');
  }

  private async entries(dir: string, tree: SmbTree): Promise<SmbEntry[]> {
    const Directory = loadDirectory().default;
    const d = new Directory(tree);
    await d.open(dir);
    const out: SmbEntry[] = [];
    try {
      // Each QUERY_DIRECTORY answers one buffer of entries: ask until there are no more.
      for (;;) {
        let batch: SmbEntry[];
        try {
          batch = await d.read();
        } catch (err) {
          if (statusOf(err) === STATUS.noMoreFiles) break;
          throw err;
        }
        if (batch.length === 0) break;
        out.push(...batch);
      }
    } finally {
      await d.close().catch(() => undefined);
    }
    return out;
  }

  private toObj(e: SmbEntry): Obj {
    const isDir = e.type === 'Directory';
    return { name: path.posix.basename(e.filename.replace(/\\/g, '/')), size: isDir ? 0 : Number(e.fileSize), isDir, modified: e.lastWriteTime, created: e.creationTime };
  }

  async list(dir: string): Promise<Obj[]> {
    const entries = await this.use((t) => this.entries(this.remote(dir), t));
    return entries.map((e) => this.toObj(e)).filter((o) => !isUploadTemp(o.name));
  }

  async get(rel: string): Promise<Obj> {
    const p = peerPath('/', rel);
    if (p === '/') {
      await this.list('/');
      return { name: '', size: 0, isDir: true, modified: new Date(0) };
    }
    const name = path.posix.basename(p);
    const found = (await this.list(path.posix.dirname(p))).find((o) => o.name === name);
    if (!found) throw new ObjectNotFound();
    return found;
  }

  async link(rel: string): Promise<Link> {
    const obj = await this.get(rel);
    if (obj.isDir) throw new ObjectNotFound('not a file');
    const file = this.remote(rel);
    return { file: { size: obj.size, modified: obj.modified, open: async (start, end) => Readable.from(this.read(file, start, Math.min(end, obj.size - 1))) } };
  }

  /** Bytes start..end (inclusive) with READ requests at those offsets, one file handle per read. */
  private async *read(file: string, start: number, end: number): AsyncGenerator<Buffer> {
    if (end < start) return;
    const File = loadFile().default;
    const { tree } = await this.conn.get();
    const f = new File(tree);
    try {
      await f.open(file);
    } catch (err) {
      throw smbError(err);
    }
    try {
      for (let offset = start; offset <= end; ) {
        const length = Math.min(READ_CHUNK, end - offset + 1);
        const lengthBuffer = Buffer.alloc(4);
        lengthBuffer.writeInt32LE(length, 0);
        const offsetBuffer = Buffer.alloc(8);
        offsetBuffer.writeBigUInt64LE(BigInt(offset));
        const res = await tree.request({ type: PACKET_READ }, { fileId: f._id, length: lengthBuffer, offset: offsetBuffer });
        const chunk = res.body.buffer;
        if (chunk.length === 0) throw new Upstream('the SMB server ended the file early');
        offset += chunk.length;
        yield chunk;
      }
    } finally {
      await f.close().catch(() => undefined);
    }
  }

  async makeDir(parent: string, name: string): Promise<void> {
    await this.use((t) => t.createDirectory(this.remote(path.posix.join(peerPath('/', parent), checkSegment(name)))));
  }

  private async relocate(rel: string, to: string): Promise<void> {
    const obj = await this.get(rel);
    const from = this.remote(rel);
    await this.use((t) => (obj.isDir ? t.renameDirectory(from, to) : t.renameFile(from, to)));
  }

  async rename(rel: string, newName: string): Promise<void> {
    const p = peerPath('/', rel);
    await this.relocate(rel, this.remote(path.posix.join(path.posix.dirname(p), checkSegment(newName))));
  }

  async move(src: string, dstDir: string): Promise<void> {
    const p = peerPath('/', src);
    await this.relocate(src, this.remote(path.posix.join(peerPath('/', dstDir), path.posix.basename(p))));
  }

  async remove(rel: string): Promise<void> {
    const p = peerPath('/', rel);
    if (p === '/') throw new Error('the root folder can not be removed');
    const obj = await this.get(rel);
    if (!obj.isDir) {
      await this.use((t) => t.removeFile(this.remote(p)));
      return;
    }
    for (const child of await this.list(p)) await this.remove(path.posix.join(p, child.name));
    await this.use((t) => t.removeDirectory(this.remote(p)));
  }

  /**
   * Writes into a hidden temporary file next to the target and renames it into place when
   * complete (an existing file is removed just before); a failed upload removes the temporary file.
   */
  async put(dstDir: string, up: UploadStream): Promise<void> {
    const dir = peerPath('/', dstDir);
    const target = this.remote(path.posix.join(dir, checkSegment(up.name)));
    const temp = this.remote(path.posix.join(dir, uploadTempName()));
    const { tree } = await this.conn.get();
    const File = loadFile().default;
    const f = new File(tree);
    let created = false;
    try {
      await f.create(temp);
      created = true;
      await pipeline(up.stream, new CheckedStream(up), f.createWriteStream(), { signal: up.signal });
      await f.close();
      try {
        await tree.removeFile(target);
      } catch (err) {
        if (!isKind(smbError(err), 'NotFound')) throw err;
      }
      await tree.renameFile(temp, target);
    } catch (err) {
      await f.close().catch(() => undefined);
      if (created) await tree.removeFile(temp).catch(() => undefined);
      throw isKind(err, 'Integrity') || isAbort(err) ? err : smbError(err);
    }
  }
}

export const smbDriver = defineDriver(CONFIG, ADDITIONAL, (options) => new SmbDriver(options));
