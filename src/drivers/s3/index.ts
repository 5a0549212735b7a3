import { isKind } from '../../errors.js';
import { isIP } from 'node:net';
import path from 'node:path';
import { pipeline, type Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import { lazyRequire } from '../../util/lazy-require.js';
import { ObjectStoreDriver } from '../object-store.js';
import { checkSegment, PermissionDenied } from '../peer.js';
import {
  defineDriver,
  type Driver,
  type DriverFactory,
  type HttpDirectUpload,
  type Link,
  type MultipartTarget,
  ObjectNotFound,
  type Obj,
  type UploadStream,
} from '../types.js';
import { CheckedStream } from '../write-file.js';
import { type PresignInput, presignGet, presignPut, rfc3986 } from './presign.js';
import { ADDITIONAL, CONFIG } from './info.js';

const loadS3 = lazyRequire<typeof import('@aws-sdk/client-s3')>('@aws-sdk/client-s3');
const loadUpload = lazyRequire<typeof import('@aws-sdk/lib-storage')>('@aws-sdk/lib-storage');

/** Object stored in an otherwise empty "folder" so that it exists (and is never listed). */
const DEFAULT_PLACEHOLDER = '.placeholder';
/** Parts of a multipart upload: 8 MiB, four in flight (32 MiB of buffers per upload at most). */
const PART_SIZE = 8 * 1024 * 1024;
const PART_QUEUE = 4;
const DELETE_BATCH = 1000;
/** The one direct upload tool: a single presigned PUT of the object. */
const HTTP_DIRECT = 'HttpDirect';
/**
 * Lifetime of a direct upload URL: 15 minutes, or `sign_url_expire` when that is shorter. The
 * client sends the file right after asking; S3 checks the expiry when the PUT starts.
 */
const DIRECT_UPLOAD_MAX_EXPIRES = 15 * 60;

/**
 * `x-amz-copy-source`: URL-encoded, keeping the reserved characters other than `?` (which would
 * start a version id) as they are — S3 decodes either form, while S3-compatible servers that decode
 * with decodeURI semantics (s3rver, some gateways) would miss keys with encoded reserved characters.
 */
const copySource = (bucket: string, key: string) => `${bucket}/${encodeURI(key).replace(/\?/g, '%3F')}`;

function s3Error(err: unknown): Error {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number }; message?: string };
  const status = e.$metadata?.httpStatusCode;
  if (e.name === 'NoSuchKey' || e.name === 'NotFound' || status === 404) {
    if (e.name === 'NoSuchBucket') return new Error('bucket not found');
    return new ObjectNotFound();
  }
  if (e.name === 'AccessDenied' || status === 403) return new PermissionDenied(e.name ?? '');
  return err instanceof Error ? err : new Error(String(err));
}

export class S3Driver extends ObjectStoreDriver implements Driver {
  private client!: S3Client;
  private readonly bucket: string;
  private readonly placeholder: string;
  private readonly endpoint: URL;

  constructor(opts: Record<string, unknown>) {
    super(opts);
    this.bucket = String(opts.bucket);
    this.placeholder = String(opts.placeholder) || DEFAULT_PLACEHOLDER;
    const ep = String(opts.endpoint);
    this.endpoint = new URL(/^[a-z]+:\/\//i.test(ep) ? ep : `https://${ep}`);
  }

  private get region(): string {
    return String(this.opts.region) || 'us-east-1';
  }

  /** As the SDK decides: an IP address (or a bucket name that is no DNS label) forces path-style. */
  private pathStyle(): boolean {
    const host = this.endpoint.hostname.replace(/^\[|\]$/g, '');
    return Boolean(this.opts.force_path_style) || isIP(host) !== 0 || !/^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/.test(this.bucket);
  }

  async init(): Promise<void> {
    const { S3Client, HeadBucketCommand } = loadS3();
    this.client = new S3Client({
      endpoint: this.endpoint.href,
      region: this.region,
      forcePathStyle: Boolean(this.opts.force_path_style),
      credentials: {
        accessKeyId: String(this.opts.access_key_id),
        secretAccessKey: String(this.opts.secret_access_key),
        sessionToken: String(this.opts.session_token) || undefined,
      },
      maxAttempts: 3,
      // No default CRC32 checksums: with a streamed body (a resumable upload's part) the SDK would
      // send them as an aws-chunked trailer, which S3-compatible servers (s3rver, older MinIO and
      // Ceph) store as part of the bytes. Operations that require a checksum still send one.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      // A peer that does not answer fails the operation (and the storage's init) instead of hanging it.
      requestHandler: { connectionTimeout: 10_000 },
    });
    const ua = String(this.opts.user_agent ?? '').trim();
    if (ua) {
      // The whole User-Agent, as OpenList sets it (the SDK's customUserAgent only appends); it is
      // not a signed header, so it is set after signing.
      this.client.middlewareStack.add(
        (next) => async (args) => {
          const req = args.request as { headers?: Record<string, string> };
          if (req.headers) req.headers['user-agent'] = ua;
          return next(args);
        },
        { step: 'finalizeRequest', priority: 'low', name: 'atriumUserAgent' },
      );
    }
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
    } catch (err) {
      const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      if (status === 404) throw new Error(`bucket ${this.bucket} not found`);
      throw s3Error(err);
    }
  }

  async drop(): Promise<void> {
    this.client?.destroy();
  }

  private async send<T>(command: object): Promise<T> {
    try {
      return (await this.client.send(command as never)) as T;
    } catch (err) {
      throw s3Error(err);
    }
  }

  /** One page after another of a listing (v1 or v2 as configured). */
  private async *pages(prefix: string, delimiter?: string, maxKeys?: number) {
    const { ListObjectsCommand, ListObjectsV2Command } = loadS3();
    const v2 = this.opts.list_object_version === 'v2';
    let token: string | undefined;
    for (;;) {
      const base = { Bucket: this.bucket, Prefix: prefix, Delimiter: delimiter, MaxKeys: maxKeys };
      type Page = {
        Contents?: Array<{ Key?: string; Size?: number; LastModified?: Date; ETag?: string }>;
        CommonPrefixes?: Array<{ Prefix?: string }>;
        IsTruncated?: boolean;
        NextContinuationToken?: string;
        NextMarker?: string;
      };
      const page = v2
        ? await this.send<Page>(new ListObjectsV2Command({ ...base, ContinuationToken: token }))
        : await this.send<Page>(new ListObjectsCommand({ ...base, Marker: token }));
      yield page;
      if (!page.IsTruncated || maxKeys) return;
      token = v2 ? page.NextContinuationToken : (page.NextMarker ?? page.Contents?.at(-1)?.Key ?? page.CommonPrefixes?.at(-1)?.Prefix);
      if (!token) return;
    }
  }

  async list(dir: string): Promise<Obj[]> {
    const prefix = this.dirPrefix(dir);
    const out: Obj[] = [];
    let seen = false;
    for await (const page of this.pages(prefix, '/')) {
      for (const p of page.CommonPrefixes ?? []) {
        seen = true;
        const name = p.Prefix!.slice(prefix.length).replace(/\/$/, '');
        if (name) out.push({ name, size: 0, isDir: true, modified: new Date(0) });
      }
      for (const c of page.Contents ?? []) {
        seen = true;
        const name = c.Key!.slice(prefix.length);
        if (name === '' || name === this.placeholder) continue;
        const obj: Obj = { name, size: c.Size ?? 0, isDir: false, modified: c.LastModified ?? new Date(0) };
        const etag = c.ETag?.replace(/"/g, '');
        if (etag && /^[0-9a-f]{32}$/.test(etag)) obj.hash = { md5: etag };
        out.push(obj);
      }
    }
    if (!seen && prefix !== this.prefix) throw new ObjectNotFound();
    return out;
  }

  protected async head(key: string): Promise<{ size: number; modified: Date } | undefined> {
    const { HeadObjectCommand } = loadS3();
    try {
      const h = await this.send<{ ContentLength?: number; LastModified?: Date }>(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return { size: h.ContentLength ?? 0, modified: h.LastModified ?? new Date(0) };
    } catch (err) {
      if (isKind(err, 'NotFound')) return undefined;
      throw err;
    }
  }

  protected async anyKeyUnder(prefix: string): Promise<boolean> {
    for await (const page of this.pages(prefix, undefined, 1)) return (page.Contents?.length ?? 0) > 0;
    return false;
  }

  /** The object's URL on the endpoint: path-style when forced or the endpoint is an IP address, else virtual-host style. */
  private objectUrl(key: string): URL {
    const u = new URL(this.endpoint.href);
    const encoded = key.split('/').map(rfc3986).join('/');
    const base = u.pathname.replace(/\/$/, '');
    if (this.pathStyle()) u.pathname = `${base}/${this.bucket}/${encoded}`;
    else {
      u.hostname = `${this.bucket}.${u.hostname}`;
      u.pathname = `${base}/${encoded}`;
    }
    return u;
  }

  /**
   * The URL a client downloads from. Without `custom_host`: presigned on the endpoint (with the
   * file name as Content-Disposition when asked). With one (a CDN or proxy in front of the
   * bucket), as OpenList: the object's path on that host (without the bucket with
   * `remove_bucket`), unsigned — or, with `enable_custom_host_presign`, presigned for that host,
   * so a host that passes requests on to the bucket serves it under a valid signature.
   */
  private signing(url: URL, expiresSeconds: number, query: Record<string, string> = {}): PresignInput {
    return {
      url,
      region: this.region,
      accessKeyId: String(this.opts.access_key_id),
      secretAccessKey: String(this.opts.secret_access_key),
      sessionToken: String(this.opts.session_token) || undefined,
      expiresSeconds,
      query,
    };
  }

  private linkUrl(key: string, expires: number): string {
    const sign = (url: URL, query: Record<string, string>) => presignGet(this.signing(url, expires, query));
    const u = this.objectUrl(key);
    const custom = String(this.opts.custom_host ?? '').trim();
    if (!custom) {
      const query: Record<string, string> = {};
      if (this.opts.add_filename_to_disposition) {
        query['response-content-disposition'] = `attachment; filename*=UTF-8''${encodeURIComponent(path.posix.basename(key))}`;
      }
      return sign(u, query);
    }
    const host = new URL(/^[a-z]+:\/\//i.test(custom) ? custom : `${u.protocol}//${custom}`);
    const onHost = new URL(`${host.protocol}//${host.host}${u.pathname}`);
    if (this.opts.remove_bucket && this.pathStyle()) onHost.pathname = onHost.pathname.replace(`/${this.bucket}`, '') || '/';
    return this.opts.enable_custom_host_presign ? sign(onHost, {}) : onHost.href;
  }

  async link(rel: string): Promise<Link> {
    const key = this.key(rel);
    const h = await this.head(key);
    if (!h) throw new ObjectNotFound();
    const expires = Math.max(1, Math.round(Number(this.opts.sign_url_expire || 4) * 3600));
    const url = this.linkUrl(key, expires);
    return {
      url,
      expiration: expires * 1000,
      file: { size: h.size, modified: h.modified, open: (start, end) => this.openRange(key, start, end) },
    };
  }

  /** `HttpDirect` when `enable_direct_upload` is on. */
  directUploadTools(): string[] {
    return this.opts.enable_direct_upload ? [HTTP_DIRECT] : [];
  }

  /**
   * A PUT of the object presigned for this key only (the signature covers the method, host and
   * path), short-lived (DIRECT_UPLOAD_MAX_EXPIRES). With `direct_upload_host` (`host[:port]` or
   * `scheme://host[:port]`, a proxy or accelerated endpoint in front of the bucket) the URL is on
   * that host, keeping the object's path, and signed for it.
   */
  async directUploadInfo(dstDir: string, name: string, args: { tool: string; size: number }): Promise<HttpDirectUpload | undefined> {
    if (!this.opts.enable_direct_upload || args.tool !== HTTP_DIRECT) return undefined;
    const url = this.objectUrl(this.fileKey(dstDir, name));
    const host = String(this.opts.direct_upload_host ?? '').trim();
    if (host) {
      // Only the scheme (when given) and the host with its port change; a bare host keeps the endpoint's scheme.
      const to = new URL(/^https?:\/\//i.test(host) ? host : `${url.protocol}//${host}`);
      url.protocol = to.protocol;
      url.hostname = to.hostname;
      url.port = to.port;
    }
    const expires = Math.max(1, Math.min(DIRECT_UPLOAD_MAX_EXPIRES, Math.round(Number(this.opts.sign_url_expire || 4) * 3600)));
    // The declared size is signed: the storage refuses a body of any other length (a browser
    // sends the file's own Content-Length; it may not set that header itself, so it is not in `headers`).
    return { url: presignPut({ ...this.signing(url, expires), headers: { 'content-length': String(args.size) } }), method: 'PUT', chunkSize: 0, expiresSeconds: expires };
  }

  private async openRange(key: string, start: number, end: number): Promise<Readable> {
    const { GetObjectCommand } = loadS3();
    const res = await this.send<{ Body?: Readable }>(new GetObjectCommand({ Bucket: this.bucket, Key: key, Range: `bytes=${start}-${end}` }));
    if (!res.Body) throw new Error('the storage sent no body');
    return res.Body;
  }

  async makeDir(parent: string, name: string): Promise<void> {
    const { PutObjectCommand } = loadS3();
    const key = `${this.dirPrefix(parent)}${checkSegment(name)}/${this.placeholder}`;
    await this.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: '' }));
  }

  protected async keysUnder(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    for await (const page of this.pages(prefix)) for (const c of page.Contents ?? []) keys.push(c.Key!);
    return keys;
  }

  protected async copyKey(from: string, to: string): Promise<void> {
    const { CopyObjectCommand } = loadS3();
    await this.send(new CopyObjectCommand({ Bucket: this.bucket, Key: to, CopySource: copySource(this.bucket, from) }));
  }

  protected async deleteKeys(keys: string[]): Promise<void> {
    const { DeleteObjectsCommand } = loadS3();
    for (let i = 0; i < keys.length; i += DELETE_BATCH) {
      const res = await this.send<{ Errors?: Array<{ Key?: string; Code?: string }> }>(
        new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: keys.slice(i, i + DELETE_BATCH).map((Key) => ({ Key })), Quiet: true } }),
      );
      const failed = res.Errors?.[0];
      if (failed) throw failed.Code === 'AccessDenied' ? new PermissionDenied(failed.Key) : new Error(`delete of ${failed.Key} failed: ${failed.Code}`);
    }
  }

  /**
   * Resumable uploads straight into S3: one multipart upload of the target object, parts sent as
   * they arrive (streamed, their length known), the object visible only after
   * CompleteMultipartUpload; AbortMultipartUpload drops the parts.
   */
  readonly multipart: MultipartTarget = {
    minPart: 5 * 1024 * 1024,
    maxPart: 5 * 1024 * 1024 * 1024,
    maxParts: 10_000,
    begin: async (dstDir, name, mimetype) => {
      const { CreateMultipartUploadCommand } = loadS3();
      const r = await this.send<{ UploadId?: string }>(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: this.fileKey(dstDir, name), ContentType: mimetype || undefined }));
      if (!r.UploadId) throw new Error('the S3 server answered no upload id');
      return r.UploadId;
    },
    part: async (dstDir, name, uploadId, n, body, size) => {
      const { UploadPartCommand } = loadS3();
      const r = await this.send<{ ETag?: string }>(
        new UploadPartCommand({ Bucket: this.bucket, Key: this.fileKey(dstDir, name), UploadId: uploadId, PartNumber: n, Body: body, ContentLength: size }),
      );
      if (!r.ETag) throw new Error(`the S3 server answered no ETag for part ${n}`);
      return r.ETag;
    },
    finish: async (dstDir, name, uploadId, parts) => {
      const { CompleteMultipartUploadCommand } = loadS3();
      await this.send(
        new CompleteMultipartUploadCommand({
          Bucket: this.bucket,
          Key: this.fileKey(dstDir, name),
          UploadId: uploadId,
          MultipartUpload: { Parts: parts.map((p) => ({ PartNumber: p.n, ETag: p.etag })) },
        }),
      );
    },
    abort: async (dstDir, name, uploadId) => {
      const { AbortMultipartUploadCommand } = loadS3();
      try {
        await this.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: this.fileKey(dstDir, name), UploadId: uploadId }));
      } catch (err) {
        // Already gone (completed, aborted, or expired by the bucket's lifecycle rules).
        if (!isKind(err, 'NotFound')) throw err;
      }
    },
  };

  private fileKey(dstDir: string, name: string): string {
    return `${this.dirPrefix(dstDir)}${checkSegment(name)}`;
  }

  /**
   * Streams into the object with a multipart upload (one PUT when it fits one part): S3 makes the
   * object visible only once the upload completes, and a failed upload is aborted.
   */
  async put(dstDir: string, up: UploadStream): Promise<void> {
    const { Upload } = loadUpload();
    const key = `${this.dirPrefix(dstDir)}${checkSegment(up.name)}`;
    const checked = new CheckedStream(up);
    pipeline(up.stream, checked, () => undefined);
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: key, Body: checked, ContentType: up.mimetype || undefined },
      partSize: PART_SIZE,
      queueSize: PART_QUEUE,
      leavePartsOnError: false,
    });
    const abort = () => void upload.abort().catch(() => undefined);
    up.signal?.addEventListener('abort', abort, { once: true });
    try {
      await upload.done();
    } catch (err) {
      checked.destroy();
      throw isKind(err, 'Integrity') ? err : s3Error(err);
    } finally {
      up.signal?.removeEventListener('abort', abort);
    }
  }
}

export const s3Driver = defineDriver(CONFIG, ADDITIONAL, (options) => new S3Driver(options));

/** DogeCloud's S3-compatible storage: the same driver and fields under its own name. */
export const dogeDriver: DriverFactory = { ...s3Driver, config: { ...s3Driver.config, name: 'Doge' } };
