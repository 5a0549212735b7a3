import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Readable, Transform } from 'node:stream';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { XMLParser } from 'fast-xml-parser';
import type { Core } from '../../core.js';
import type { Obj } from '../../drivers/types.js';
import { isKind } from '../../errors.js';
import { proxy } from '../../server/routes/raw.js';
import { sendFile } from '../../server/send-file.js';
import type { View } from '../../view/view.js';
import { listenOn, type ProtocolListener } from '../listeners.js';
import { accessDenied, noSuchKey, S3Error, toS3Error } from './errors.js';
import { etagOf } from './etag.js';
import { contentsXml } from './contents.js';
import { listKeys } from './listing.js';
import { Multipart } from './multipart.js';
import { authenticate, bucketOf, bucketView, type Principal, principalView, requireWriter } from './principal.js';
import { checksumAlgorithmOf, ChecksumCheck, invalidChecksum, wellFormed } from './checksums.js';
import { AwsChunkedDecoder, queryPairs, Sha256Check } from './sigv4.js';
import { document, documentBytes, errorDocument, type XmlNode } from './xml.js';

const MAX_XML_BODY = 2 * 1024 * 1024;
/** Keys a ListObjects page holds when the request names no `max-keys` (S3's default). */
const DEFAULT_MAX_KEYS = 1000;
/**
 * The most keys a ListObjects page holds: `max-keys` above it is clamped to it (AWS clamps at
 * 1 000; servers that allow more serve clients such as rclone's `--s3-list-chunk` in fewer
 * round trips). A page of 10 000 short keys is about 2 MB of XML.
 */
const MAX_KEYS = 10_000;
/** Marks the keys of folders an S3 client created (`a/b/`): stored as the folder itself. */
const isFolderKey = (key: string) => key.endsWith('/');

/** One S3 request: its principal, bucket and key (decoded, without the leading `/`). */
interface S3Call {
  req: FastifyRequest;
  reply: FastifyReply;
  principal: Principal;
  bucket: string;
  key: string;
  query: Map<string, string>;
}

/** The S3-compatible server (config `s3`): its own port, path-style and virtual-host buckets. */
export async function startS3Server(core: Core, port = core.config.s3.port, host = core.config.scheme.address): Promise<ProtocolListener> {
  const { scheme, s3 } = core.config;
  const https = s3.ssl ? { cert: readFileSync(scheme.cert_file), key: readFileSync(scheme.key_file) } : null;
  const app = Fastify({ logger: false, https, bodyLimit: MAX_XML_BODY, maxParamLength: 8192 } as object) as unknown as FastifyInstance;
  s3App(app, core);
  await app.ready();
  const taken = await listenOn(app.server, port, host === '0.0.0.0' ? '' : host);
  return { url: `${s3.ssl ? 'https' : 'http'}://${host || '0.0.0.0'}:${taken}`, port: taken, close: () => app.close() };
}

export function s3App(app: FastifyInstance, core: Core): void {
  const log = core.log.child({ service: 's3' });
  const multipart = new Multipart(core);
  void multipart.dropStale().then((n) => n > 0 && log.info({ dropped: n }, 'stale multipart uploads removed'), (err: unknown) => log.warn({ err }, 'stale multipart uploads not removed'));
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_req, _payload, done) => done(null));
  app.setErrorHandler((err, req, reply) => {
    const e = toS3Error(err);
    if (e.status >= 500) log.error({ err, method: req.method, url: req.url }, 's3 request failed');
    if (reply.sent || reply.raw.headersSent) return;
    if (!req.raw.readableEnded) req.raw.resume();
    const body = req.method === 'HEAD' ? '' : errorDocument(e.code, e.message, req.url.split('?')[0]!);
    void reply.code(e.status).header('x-amz-error-code', e.code).type('application/xml').send(body);
  });
  app.route({
    method: ['GET', 'HEAD', 'PUT', 'POST', 'DELETE'],
    url: '/*',
    handler: async (req, reply) => {
      const url = req.raw.url ?? '/';
      const q = url.indexOf('?');
      const rawPath = q < 0 ? url : url.slice(0, q);
      const rawQuery = q < 0 ? '' : url.slice(q + 1);
      const query = new Map(queryPairs(rawQuery));
      const principal = await authenticate(core, { method: req.method, rawPath, rawQuery, query, headers: req.headers, ip: req.ip });
      const { bucket, key } = locate(principal, rawPath, req.headers.host ?? '');
      reply.header('x-amz-request-id', req.id);
      return dispatch(core, multipart, { req, reply, principal, bucket, key, query });
    },
  });
}

function decodePath(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new S3Error(400, 'InvalidURI', 'Could not parse the specified URI.');
  }
}

/**
 * The bucket and key of a request: virtual-host style when the Host's first label is a bucket
 * this principal has (`photos.s3.example:5246`), else path style (`/photos/key`).
 */
function locate(p: Principal, rawPath: string, host: string): { bucket: string; key: string } {
  const hostname = host.replace(/:\d+$/, '');
  const label = hostname.split('.')[0] ?? '';
  if (hostname.includes('.') && !/^[\d.]+$/.test(hostname) && p.buckets.some((b) => b.name === label)) {
    return { bucket: label, key: decodePath(rawPath.slice(1)) };
  }
  const rest = rawPath.slice(1);
  const slash = rest.indexOf('/');
  if (slash < 0) return { bucket: decodePath(rest), key: '' };
  return { bucket: decodePath(rest.slice(0, slash)), key: decodePath(rest.slice(slash + 1)) };
}

async function dispatch(core: Core, mp: Multipart, c: S3Call): Promise<unknown> {
  const m = c.req.method;
  if (c.bucket === '') {
    if (m !== 'GET') throw new S3Error(405, 'MethodNotAllowed', 'The specified method is not allowed against this resource.');
    return listBuckets(core, c);
  }
  const bucket = bucketOf(c.principal, c.bucket);
  const view = bucketView(core, c.principal, bucket);
  if (c.key === '') {
    if (m === 'HEAD') return headBucket(view, c);
    if (m === 'PUT') throw new S3Error(409, 'BucketAlreadyOwnedByYou', 'Your previous request to create the named bucket succeeded and you already own it.');
    if (m === 'DELETE') throw new S3Error(409, 'BucketNotEmpty', 'Buckets are folders of the server; they are configured in s3_buckets.');
    if (m === 'POST' && c.query.has('delete')) return deleteObjects(view, c);
    if (m === 'GET' && c.query.has('location')) return xml(c, document('LocationConstraint', []));
    if (m === 'GET' && c.query.has('versioning')) return xml(c, document('VersioningConfiguration', []));
    if (m === 'GET' && c.query.has('uploads')) return mp.listUploads(c.reply, c.principal, c.bucket, c.query);
    if (m === 'GET') return listObjects(view, c);
    throw new S3Error(405, 'MethodNotAllowed', 'The specified method is not allowed against this resource.');
  }
  const uploadId = c.query.get('uploadId');
  if (m === 'POST' && c.query.has('uploads')) return mp.create(c.reply, c.principal, view, c.bucket, c.key);
  if (uploadId !== undefined) {
    if (m === 'PUT') return mp.uploadPart(c.reply, c.principal, uploadId, c.query.get('partNumber'), bodyOf(c), contentMd5(c.req));
    if (m === 'POST') return mp.complete(c.reply, c.principal, view, uploadId, c.bucket, c.key, await readBody(c.req));
    if (m === 'DELETE') return mp.abort(c.reply, c.principal, uploadId);
    if (m === 'GET') return mp.listParts(c.reply, c.principal, uploadId, c.bucket, c.key, c.query);
  }
  switch (m) {
    case 'GET':
    case 'HEAD':
      return getObject(core, view, c, m === 'HEAD');
    case 'PUT':
      return c.req.headers['x-amz-copy-source'] ? copyObject(core, view, c) : putObject(view, c);
    case 'DELETE':
      return deleteObject(view, c);
    default:
      throw new S3Error(405, 'MethodNotAllowed', 'The specified method is not allowed against this resource.');
  }
}

/** Sends a document as bytes (Node writes a large string to a socket far slower than its bytes). */
function xml(c: S3Call, body: string | Buffer, status = 200) {
  return c.reply.code(status).type('application/xml').send(typeof body === 'string' ? Buffer.from(body) : body);
}

const iso = (d: Date) => (Number.isNaN(d.getTime()) ? new Date(0) : d).toISOString();

async function listBuckets(core: Core, c: S3Call) {
  const buckets: XmlNode[] = [];
  for (const b of c.principal.buckets) {
    const view = bucketView(core, c.principal, b);
    const obj = await view.find(view.virtual('/')).catch(() => undefined);
    if (!obj?.isDir) continue;
    buckets.push(['Bucket', [['Name', b.name], ['CreationDate', iso(obj.modified)]]]);
  }
  const owner: XmlNode = ['Owner', [['ID', String(c.principal.user.id)], ['DisplayName', c.principal.user.username]]];
  return xml(c, document('ListAllMyBucketsResult', [owner, ['Buckets', buckets]]));
}

async function headBucket(view: View, c: S3Call) {
  const obj = await view.find(view.virtual('/'));
  if (!obj?.isDir) throw new S3Error(404, 'NoSuchBucket', `The specified bucket does not exist: ${c.bucket}`);
  return c.reply.code(200).header('x-amz-bucket-region', 'us-east-1').send();
}

function maxKeysOf(q: Map<string, string>): number {
  const raw = q.get('max-keys');
  if (raw === undefined) return DEFAULT_MAX_KEYS;
  if (!/^\d+$/.test(raw)) throw new S3Error(400, 'InvalidArgument', 'max-keys must be a non-negative integer');
  return Math.min(Number(raw), MAX_KEYS);
}

async function listObjects(view: View, c: S3Call) {
  const q = c.query;
  const v2 = q.get('list-type') === '2';
  const prefix = q.get('prefix') ?? '';
  const delimiter = q.get('delimiter') ?? '';
  const maxKeys = maxKeysOf(q);
  const encode = q.get('encoding-type') === 'url';
  const enc = (s: string) => (encode ? encodeURIComponent(s).replace(/%2F/g, '/') : s);
  let after = '';
  const token = q.get('continuation-token');
  if (v2) {
    if (token !== undefined) {
      after = Buffer.from(token, 'base64url').toString('utf8');
      if (after === '') throw new S3Error(400, 'InvalidArgument', 'The continuation token provided is incorrect');
    } else after = q.get('start-after') ?? '';
  } else after = q.get('marker') ?? '';
  const r = await listKeys(view, { prefix, delimiter, after, maxKeys });
  const contents = contentsXml(r.contents, encode, enc);
  const prefixes: XmlNode[] = r.prefixes.map((p) => ['CommonPrefixes', [['Prefix', enc(p)]]]);
  const head: Array<XmlNode | undefined> = [['Name', c.bucket], ['Prefix', enc(prefix)]];
  if (v2) {
    head.push(
      token !== undefined ? ['ContinuationToken', token] : undefined,
      q.has('start-after') ? ['StartAfter', enc(q.get('start-after')!)] : undefined,
      ['KeyCount', r.contents.length + r.prefixes.length],
      r.truncated ? ['NextContinuationToken', Buffer.from(r.last).toString('base64url')] : undefined,
    );
  } else {
    head.push(['Marker', enc(after)], r.truncated && delimiter ? ['NextMarker', enc(r.last)] : undefined);
  }
  head.push(['MaxKeys', maxKeys], delimiter ? ['Delimiter', enc(delimiter)] : undefined, encode ? ['EncodingType', 'url'] : undefined, ['IsTruncated', r.truncated]);
  return xml(c, documentBytes('ListBucketResult', [...head, contents, ...prefixes]));
}

/** The object a key names: a file, or a folder for a key ending in `/`. */
async function objectAt(view: View, key: string): Promise<{ p: string; obj: Obj }> {
  const p = view.virtual(key);
  const obj = await view.find(p);
  if (!obj || obj.isDir !== isFolderKey(key)) throw noSuchKey();
  return { p, obj };
}

function objectHeaders(reply: FastifyReply, obj: Obj): void {
  reply.header('x-amz-meta-mtime', (obj.modified.getTime() / 1000).toFixed(3));
  reply.header('Accept-Ranges', 'bytes');
}

async function getObject(core: Core, view: View, c: S3Call, head: boolean) {
  const { p, obj } = await objectAt(view, c.key);
  objectHeaders(c.reply, obj);
  const etag = etagOf(obj);
  if (head || obj.isDir) {
    return sendFile(c.req, c.reply, { name: obj.name || 'folder', size: obj.isDir ? 0 : obj.size, modified: obj.modified, etag, contentType: obj.isDir ? 'application/x-directory' : undefined, open: async () => (await import('node:stream')).Readable.from([]) }, { disposition: 'inline' });
  }
  const rangeError = invalidRange(c.req.headers.range, obj.size);
  if (rangeError) throw rangeError;
  const { link, storage } = await view.link(p, { ip: c.req.ip, header: c.req.headers });
  return proxy(core, c.req, c.reply, link, obj.name, obj.hash, storage, etag);
}

/** S3 answers an unsatisfiable range with InvalidRange (send-file would answer a bare 416). */
function invalidRange(range: string | undefined, size: number): S3Error | undefined {
  const m = range ? /^bytes=(\d*)-(\d*)$/.exec(range.trim()) : null;
  if (!m) return undefined;
  const start = m[1] === '' ? undefined : Number(m[1]);
  if ((start !== undefined && start >= size) || (start === undefined && (m[2] === '' || Number(m[2]) === 0))) {
    return new S3Error(416, 'InvalidRange', 'The requested range is not satisfiable');
  }
  return undefined;
}

/** A request body as the object's bytes, with what it was checked against. */
interface Body {
  stream: Readable;
  size: number;
  /** The S3 error a check failed the stream with (the storage's writer only sees a broken stream). */
  failure: () => S3Error | undefined;
  /** The flexible checksum the body matched (`x-amz-checksum-*` and its value), once it has ended. */
  checksum: () => { name: string; value: string } | undefined;
}

/**
 * The request body as the object's bytes: its declared SHA-256 checked (a signed payload),
 * aws-chunked decoded (chunk and trailer signatures checked), and its flexible checksum
 * (`x-amz-checksum-*`, as a header or as the trailer `x-amz-trailer` names) computed and
 * compared before the body ends, so a body that fails any check is never stored.
 */
function bodyOf(c: S3Call): Body {
  const h = c.req.headers;
  const hash = c.principal.signature?.payloadHash ?? 'UNSIGNED-PAYLOAD';
  const chunked = hash.startsWith('STREAMING-') || /aws-chunked/i.test(String(h['content-encoding'] ?? ''));
  const trailerNames = String(h['x-amz-trailer'] ?? '')
    .split(',')
    .map((x) => x.trim().toLowerCase())
    .filter(Boolean);
  if (trailerNames.length > 0 && !chunked) throw new S3Error(400, 'InvalidRequest', 'x-amz-trailer needs an aws-chunked body.');
  if (hash.endsWith('-TRAILER') && trailerNames.length === 0) throw new S3Error(400, 'InvalidRequest', `${hash} needs the x-amz-trailer header.`);
  // x-amz-checksum-type / -algorithm / -mode name a kind of checksum, they carry none.
  const headerChecksums = Object.keys(h).filter((k) => k.startsWith('x-amz-checksum-') && !['x-amz-checksum-type', 'x-amz-checksum-algorithm', 'x-amz-checksum-mode'].includes(k));
  const declared = [...headerChecksums, ...trailerNames];
  if (declared.length > 1) throw new S3Error(400, 'InvalidRequest', 'Expecting a single x-amz-checksum- header. Multiple checksum types are not allowed.');
  const name = declared[0];
  const algorithm = name === undefined ? undefined : checksumAlgorithmOf(name);
  if (name !== undefined && algorithm === undefined) throw new S3Error(400, 'InvalidRequest', `The checksum ${name} is not supported (CRC32, CRC32C, CRC64NVME, SHA1 and SHA256 are).`);
  if (name !== undefined && headerChecksums.length === 1 && !wellFormed(algorithm!, String(h[name]))) throw invalidChecksum(name);

  let size: number;
  if (chunked) size = Number(h['x-amz-decoded-content-length'] ?? -1);
  else size = h['content-length'] === undefined ? -1 : Number(h['content-length']);
  if (!Number.isSafeInteger(size) || size < -1) throw new S3Error(400, 'InvalidArgument', 'bad content length');

  const stages: Transform[] = [];
  if (/^[0-9a-f]{64}$/i.test(hash)) stages.push(new Sha256Check(hash));
  let decoder: AwsChunkedDecoder | undefined;
  if (chunked) {
    decoder = new AwsChunkedDecoder(c.principal.chunkSigning, {
      trailers: new Set(trailerNames),
      signedTrailer: hash === 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER',
      decodedLength: size >= 0 ? size : undefined,
    });
    stages.push(decoder);
  }
  let check: ChecksumCheck | undefined;
  if (name !== undefined) {
    const fromHeader = headerChecksums.length === 1;
    check = new ChecksumCheck({ algorithm: algorithm!, name, value: () => (fromHeader ? String(h[name]) : decoder?.trailers.get(name)) });
    stages.push(check);
  }
  // Each stage fails the stream with its own S3 error; the request answers with the first one.
  let failed: S3Error | undefined;
  let stream: Readable = c.req.raw;
  for (const t of stages) {
    t.on('error', (err) => {
      if (err instanceof S3Error) failed ??= err;
    });
    const from = stream;
    from.once('error', (err) => t.destroy(err));
    stream = from.pipe(t);
  }
  return {
    stream,
    size,
    failure: () => failed,
    checksum: () => (check?.verified !== undefined ? { name: name!, value: check.verified } : undefined),
  };
}

/** `x-amz-meta-mtime` (seconds, as rclone and s3cmd send it) as the stored modification time. */
function mtimeOf(h: FastifyRequest['headers']): Date | undefined {
  const raw = h['x-amz-meta-mtime'] ?? h['x-amz-meta-src-last-modified'];
  const n = Number(raw);
  return raw !== undefined && Number.isFinite(n) && n > 0 ? new Date(n * 1000) : undefined;
}

async function putObject(view: View, c: S3Call) {
  requireWriter(c.principal);
  const p = view.virtual(c.key);
  if (isFolderKey(c.key)) {
    const { stream } = bodyOf(c);
    for await (const chunk of stream) if ((chunk as Buffer).length) throw new S3Error(400, 'InvalidRequest', 'A key ending in "/" names a folder and takes no bytes.');
    await view.mkdir(p);
    const obj = await view.stat(p);
    return c.reply.code(200).header('ETag', etagOf(obj)).send();
  }
  const name = view.checkPut(p);
  const md5 = contentMd5(c.req);
  const { stream, size, failure, checksum } = bodyOf(c);
  try {
    await view.put(p, { name, size, stream, modified: mtimeOf(c.req.headers), mimetype: c.req.headers['content-type'], hashes: md5 ? { md5 } : undefined }, true);
  } catch (err) {
    throw failure() ?? err;
  }
  const obj = await view.stat(p);
  const sum = checksum();
  if (sum) c.reply.header(sum.name, sum.value);
  return c.reply.code(200).header('ETag', etagOf(obj)).send();
}

/** The `Content-MD5` header as hex, or undefined without one; a value that is no MD5 is InvalidDigest. */
export function contentMd5(req: FastifyRequest): string | undefined {
  const raw = req.headers['content-md5'];
  if (raw === undefined) return undefined;
  const md5 = Buffer.from(String(raw), 'base64');
  if (md5.length !== 16 || md5.toString('base64') !== String(raw).trim()) throw new S3Error(400, 'InvalidDigest', 'The Content-MD5 you specified was invalid.');
  return md5.toString('hex');
}

async function deleteObject(view: View, c: S3Call) {
  requireWriter(c.principal);
  await removeKey(view, c.key);
  return c.reply.code(204).send();
}

/** Deletes a key; a key that is not there is no error (S3 semantics). */
async function removeKey(view: View, key: string): Promise<void> {
  const p = view.virtual(key);
  if (p === view.root) throw accessDenied('The bucket folder itself can not be deleted.');
  try {
    await view.removePath(p, isFolderKey(key) ? 'empty-folder' : 'file');
  } catch (err) {
    if (isKind(err, 'NotFound', 'Hidden')) return;
    if (isKind(err, 'BadRequest') && !isFolderKey(key)) return;
    throw err;
  }
}

// Go's encoder writes the quotes of ETags as &#34;: numeric character references are decoded too.
const parser = new XMLParser({ ignoreAttributes: true, parseTagValue: false, htmlEntities: true, isArray: (name) => name === 'Object' || name === 'Part' });

export async function readBody(req: FastifyRequest): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req.raw) {
    size += (chunk as Buffer).length;
    if (size > MAX_XML_BODY) throw new S3Error(400, 'MaxMessageLengthExceeded', 'Your request was too big.');
    chunks.push(chunk as Buffer);
  }
  try {
    return parser.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
  } catch {
    throw new S3Error(400, 'MalformedXML', 'The XML you provided was not well-formed.');
  }
}

async function deleteObjects(view: View, c: S3Call) {
  requireWriter(c.principal);
  const body = await readBody(c.req);
  const del = body.Delete as { Object?: Array<{ Key?: string }>; Quiet?: string } | undefined;
  const objects = del?.Object ?? [];
  if (!del || objects.length > 1000) throw new S3Error(400, 'MalformedXML', 'The XML you provided was not well-formed.');
  const quiet = del.Quiet === 'true';
  const out: XmlNode[] = [];
  for (const o of objects) {
    const key = String(o.Key ?? '');
    try {
      if (key === '') throw new S3Error(400, 'InvalidArgument', 'A key is empty.');
      await removeKey(view, key);
      if (!quiet) out.push(['Deleted', [['Key', key]]]);
    } catch (err) {
      const e = toS3Error(err);
      out.push(['Error', [['Key', key], ['Code', e.code], ['Message', e.message]]]);
    }
  }
  return xml(c, document('DeleteResult', out));
}

async function copyObject(core: Core, view: View, c: S3Call) {
  requireWriter(c.principal);
  const raw = String(c.req.headers['x-amz-copy-source']).split('?')[0]!;
  const source = decodePath(raw.replace(/^\//, ''));
  const slash = source.indexOf('/');
  if (slash <= 0 || slash === source.length - 1) throw new S3Error(400, 'InvalidArgument', 'Copy Source must name a bucket and a key.');
  const srcView = bucketView(core, c.principal, bucketOf(c.principal, source.slice(0, slash)));
  const { p: src, obj } = await objectAt(srcView, source.slice(slash + 1));
  if (obj.isDir) throw new S3Error(400, 'InvalidRequest', 'A folder can not be copied.');
  const dst = view.virtual(c.key);
  const mtime = mtimeOf(c.req.headers);
  if (src === dst) {
    // A copy onto itself only changes metadata (rclone sets the modification time this way).
    if (mtime) await view.setModified(dst, mtime);
  } else {
    const whole = principalView(core, c.principal);
    await whole.mkdir(path.posix.dirname(dst)).catch((err: unknown) => {
      if (!isKind(err, 'Exists')) throw err;
    });
    await whole.copyTo(src, dst, true);
    if (mtime && c.req.headers['x-amz-metadata-directive'] === 'REPLACE') await view.setModified(dst, mtime).catch(() => undefined);
  }
  const copied = await view.stat(dst);
  return xml(c, document('CopyObjectResult', [['LastModified', iso(copied.modified)], ['ETag', etagOf(copied)]]));
}
