import { isIP } from 'node:net';
import { pipeline, type Readable } from 'node:stream';
import type { ContainerClient } from '@azure/storage-blob';
import { isKind, Upstream } from '../../errors.js';
import { lazyRequire } from '../../util/lazy-require.js';
import { ObjectStoreDriver } from '../object-store.js';
import { checkSegment, PermissionDenied } from '../peer.js';
import {
  defineDriver,
  type Driver,
  type Link,
  ObjectNotFound,
  type Obj,
  type UploadStream,
} from '../types.js';
import { CheckedStream } from '../write-file.js';
import { ADDITIONAL, CONFIG } from './info.js';

const loadAzure = lazyRequire<typeof import('@azure/storage-blob')>('@azure/storage-blob');

/** Blob kept in an otherwise empty "folder" so that it exists; never listed. */
const PLACEHOLDER = '.placeholder';
/** Block uploads: 8 MiB blocks, four in flight (32 MiB of buffers per upload at most). */
const BLOCK_SIZE = 8 * 1024 * 1024;
const BLOCKS_IN_FLIGHT = 4;

function azureError(err: unknown): Error {
  const e = err as { statusCode?: number; code?: string; message?: string };
  if (e.statusCode === 404 || e.code === 'BlobNotFound') return new ObjectNotFound();
  if (e.statusCode === 403) return new PermissionDenied(e.code ?? '');
  if (e.code) return new Upstream(`azure blob storage: ${e.code}`);
  return err instanceof Error ? err : new Error(String(err));
}

/**
 * The account an endpoint names: the first label of `<account>.blob.core.windows.net`, or the
 * first path segment of a path-style endpoint (`http://127.0.0.1:10000/<account>`, the emulator's).
 */
export function accountOf(endpoint: URL): { account: string; pathStyle: boolean } {
  const host = endpoint.hostname.replace(/^\[|\]$/g, '');
  const pathStyle = isIP(host) !== 0 || host === 'localhost' || !host.includes('.');
  const account = pathStyle ? (endpoint.pathname.split('/').filter(Boolean)[0] ?? '') : host.split('.')[0]!;
  return { account, pathStyle };
}

/**
 * OpenList's Azure Blob Storage: a container (below root_folder_path) through @azure/storage-blob
 * with the account's shared key. Folders are name prefixes, an empty one holds `.placeholder`;
 * downloads redirect to a read-only SAS URL valid sign_url_expire hours; uploads are streamed as
 * blocks and committed at the end; copies are server-side (rename and move: copy + delete).
 */
export class AzureBlobDriver extends ObjectStoreDriver implements Driver {
  private container!: ContainerClient;
  private readonly endpoint: URL;

  constructor(opts: Record<string, unknown>) {
    super(opts);
    const ep = String(opts.endpoint).trim();
    this.endpoint = new URL(/^[a-z]+:\/\//i.test(ep) ? ep : `https://${ep}`);
  }

  async init(): Promise<void> {
    const { BlobServiceClient, StorageSharedKeyCredential } = loadAzure();
    const { account } = accountOf(this.endpoint);
    if (!account) throw new Error(`no account name in the endpoint ${this.endpoint.href}`);
    const credential = new StorageSharedKeyCredential(account, String(this.opts.access_key));
    const service = new BlobServiceClient(this.endpoint.href.replace(/\/$/, ''), credential, { retryOptions: { maxTries: 3, tryTimeoutInMs: 30_000 } });
    this.container = service.getContainerClient(String(this.opts.container_name));
    try {
      await this.container.getProperties();
    } catch (err) {
      const e = err as { statusCode?: number };
      if (e.statusCode === 404) throw new Error(`container ${String(this.opts.container_name)} not found`);
      throw azureError(err);
    }
  }

  async drop(): Promise<void> {}

  private async call<T>(op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch (err) {
      throw azureError(err);
    }
  }

  async list(dir: string): Promise<Obj[]> {
    const prefix = this.dirPrefix(dir);
    const out: Obj[] = [];
    let seen = false;
    await this.call(async () => {
      for await (const it of this.container.listBlobsByHierarchy('/', { prefix })) {
        seen = true;
        const name = it.name.slice(prefix.length).replace(/\/$/, '');
        if (name === '' || name === PLACEHOLDER) continue;
        if (it.kind === 'prefix') out.push({ name, size: 0, isDir: true, modified: new Date(0) });
        else {
          const obj: Obj = { name, size: it.properties.contentLength ?? 0, isDir: false, modified: it.properties.lastModified ?? new Date(0) };
          const md5 = it.properties.contentMD5;
          if (md5 && md5.length === 16) obj.hash = { md5: Buffer.from(md5).toString('hex') };
          out.push(obj);
        }
      }
    });
    if (!seen && prefix !== this.prefix) throw new ObjectNotFound();
    return out;
  }

  protected async head(name: string): Promise<{ size: number; modified: Date } | undefined> {
    try {
      const p = await this.container.getBlobClient(name).getProperties();
      return { size: p.contentLength ?? 0, modified: p.lastModified ?? new Date(0) };
    } catch (err) {
      const e = azureError(err);
      if (isKind(e, 'NotFound')) return undefined;
      throw e;
    }
  }

  protected async anyKeyUnder(prefix: string): Promise<boolean> {
    return this.call(async () => {
      for await (const page of this.container.listBlobsFlat({ prefix }).byPage({ maxPageSize: 1 })) return page.segment.blobItems.length > 0;
      return false;
    });
  }

  async link(rel: string): Promise<Link> {
    const blobName = this.key(rel);
    const h = await this.head(blobName);
    if (!h) throw new ObjectNotFound();
    const { BlobSASPermissions } = loadAzure();
    const hours = Number(this.opts.sign_url_expire) > 0 ? Number(this.opts.sign_url_expire) : 4;
    const seconds = Math.max(60, Math.round(hours * 3600));
    const blob = this.container.getBlobClient(blobName);
    const url = await this.call(() => blob.generateSasUrl({ permissions: BlobSASPermissions.parse('r'), expiresOn: new Date(Date.now() + seconds * 1000) }));
    return {
      url,
      expiration: seconds * 1000,
      file: { size: h.size, modified: h.modified, open: (start, end) => this.openRange(blobName, start, end) },
    };
  }

  private async openRange(blobName: string, start: number, end: number): Promise<Readable> {
    const res = await this.call(() => this.container.getBlobClient(blobName).download(start, end - start + 1));
    if (!res.readableStreamBody) throw new Upstream('the storage sent no body');
    return res.readableStreamBody as Readable;
  }

  async makeDir(parent: string, name: string): Promise<void> {
    const blobName = `${this.dirPrefix(parent)}${checkSegment(name)}/${PLACEHOLDER}`;
    await this.call(() => this.container.getBlockBlobClient(blobName).upload('', 0));
  }

  protected async keysUnder(prefix: string): Promise<string[]> {
    const names: string[] = [];
    await this.call(async () => {
      for await (const b of this.container.listBlobsFlat({ prefix })) names.push(b.name);
    });
    return names;
  }

  /** Server-side copy of one blob (within the container, authorized by the same key). */
  protected async copyKey(from: string, to: string): Promise<void> {
    const source = this.container.getBlobClient(from).url;
    await this.call(async () => {
      const poller = await this.container.getBlobClient(to).beginCopyFromURL(source);
      await poller.pollUntilDone();
    });
  }

  protected async deleteKeys(names: string[]): Promise<void> {
    for (let i = 0; i < names.length; i += 16) {
      await Promise.all(names.slice(i, i + 16).map((n) => this.call(() => this.container.getBlobClient(n).deleteIfExists())));
    }
  }

  /**
   * Streams the upload as staged blocks and commits the block list at the end: the blob changes
   * only when every block is there; a failed upload leaves uncommitted blocks, which the service
   * discards (after a week at most) and never shows.
   */
  async put(dstDir: string, up: UploadStream): Promise<void> {
    const blobName = `${this.dirPrefix(dstDir)}${checkSegment(up.name)}`;
    const checked = new CheckedStream(up);
    pipeline(up.stream, checked, () => undefined);
    try {
      await this.container.getBlockBlobClient(blobName).uploadStream(checked, BLOCK_SIZE, BLOCKS_IN_FLIGHT, {
        abortSignal: up.signal,
        blobHTTPHeaders: { blobContentType: up.mimetype || undefined },
      });
    } catch (err) {
      checked.destroy();
      throw isKind(err, 'Integrity') ? err : azureError(err);
    }
  }
}

export const azureBlobDriver = defineDriver(CONFIG, ADDITIONAL, (options) => new AzureBlobDriver(options));
