import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Readable, Transform } from 'node:stream';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Core } from '../../core.js';
import type { Obj } from '../../drivers/types.js';
import { isKind } from '../../errors.js';
import { proxy } from '../../http/proxy.js';
import { sendFile } from '../../http/send-file.js';
import type { View } from '../../view/view.js';
import { listenOn, type ProtocolListener } from '../listen-on.js';
import { aclDocument, putAcl } from './acl.js';
import { isFolderKey, iso, objectAt, readBody, type S3Call, MAX_XML_BODY, xml } from './call.js';
import { accessDenied, S3Error, toS3Error } from './errors.js';
import { etagOf } from './etag.js';
import { type Known, Md5Tap, S3Digests } from './digests.js';
import { contentsXml } from './contents.js';
import { listKeys } from './listing.js';
import { Multipart } from './multipart.js';
import { authenticate, bucketOf, bucketView, type Principal, principalView, requireWriter } from './principal.js';
import { checksumAlgorithmOf, ChecksumCheck, invalidChecksum, wellFormed } from './checksums.js';
import { AwsChunkedDecoder, queryPairs, Sha256Check } from './sigv4.js';
import { notImplemented, subresourceOf } from './subresources.js';
import { S3Tags, taggingDocument, tagsFromHeader, tagsFromXml } from './tagging.js';
import { document, documentBytes, errorDocument, type XmlNode } from './xml.js';
import { originOf } from '../../http/origin.js';

/** Keys a ListObjects page holds when the request names no `max-keys` (S3's default). */
const DEFAULT_MAX_KEYS = 1000;
/**
 * The most keys a ListObjects page holds: `max-keys` above it is clamped to it (AWS clamps at
 * 1 000; servers that allow more serve clients such as rclone's `--s3-list-chunk` in fewer
 * round trips). A page of 10 000 short keys is about 2 MB of XML.
 */
const MAX_KEYS = 10_000;
/** What every operation of a request may use: the services, the bucket's view and the call. */
interface Op {
  core: Core;
  mp: Multipart;
  tags: S3Tags;
  digests: S3Digests;
  view: View;
  c: S3Call;
}

type Method = 'GET' | 'HEAD' | 'PUT' | 'POST' | 'DELETE';
type Handlers = Partial<Record<Method, (op: Op) => Promise<unknown>>>;

const contentTypes = new WeakMap<object, string>();

/** The S3-compatible server (config `s3`): its own port, path-style and virtual-host buckets. */
export async function startS3Server(core: Core, port = core.config.s3.port, host = core.config.scheme.address): Promise<ProtocolListener> {
  const { scheme, s3 } = core.config;
  const https = s3.ssl ? { cert: readFileSync(scheme.cert_file), key: readFileSync(scheme.key_file) } : null;
  const app = Fastify({ logger: false, https, bodyLimit: MAX_XML_BODY, routerOptions: { maxParamLength: 8192 } } as object) as unknown as FastifyInstance;
  s3App(app, core);
  await app.ready();
  const taken = await listenOn(app.server, port, host === '0.0.0.0' ? '' : host);
  return { url: `${s3.ssl ? 'https' : 'http'}://${host || '0.0.0.0'}:${taken}`, port: taken, close: () => app.close() };
}

export function s3App(app: FastifyInstance, core: Core): void {
  const log = core.log.child({ service: 's3' });
  const multipart = new Multipart(core);
  const kept = { tags: new S3Tags(core.repos.objectTags), digests: new S3Digests(core.repos.objectDigests) };
  void multipart.dropStale().then((n) => n > 0 && log.info({ dropped: n }, 'stale multipart uploads removed'), (err: unknown) => log.warn({ err }, 'stale multipart uploads not removed'));
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_req, _payload, done) => done(null));
  // S3 keeps any Content-Type as sent (an empty one is no type); Fastify answers one it cannot
  // parse with 415 before the route runs. No body is parsed here, so the header is set aside
  // until the route (which signs and stores it as it came).
  app.addHook('onRequest', (req, _reply, done) => {
    const type = req.raw.headers['content-type'];
    if (type !== undefined) {
      contentTypes.set(req.raw, type);
      delete req.raw.headers['content-type'];
    }
    done();
  });
  app.setErrorHandler((err, req, reply) => {
    const e = toS3Error(err);
    if (e.status >= 500) log.error({ err, reqId: req.id, method: req.method, url: req.url }, 's3 request failed');
    if (reply.sent || reply.raw.headersSent) return;
    if (!req.raw.readableEnded) req.raw.resume();
    const body = req.method === 'HEAD' ? '' : errorDocument(e.code, e.message, req.url.split('?')[0]!);
    void reply.code(e.status).header('x-amz-error-code', e.code).type('application/xml').send(body);
  });
  app.route({
    method: ['GET', 'HEAD', 'PUT', 'POST', 'DELETE'],
    url: '/*',
    handler: async (req, reply) => {
      const type = contentTypes.get(req.raw);
      if (type !== undefined) req.raw.headers['content-type'] = type;
      const url = req.raw.url ?? '/';
      const q = url.indexOf('?');
      const rawPath = q < 0 ? url : url.slice(0, q);
      const rawQuery = q < 0 ? '' : url.slice(q + 1);
      const query = new Map(queryPairs(rawQuery));
      const principal = await authenticate(core, { method: req.method, rawPath, rawQuery, query, headers: req.headers, ip: req.ip });
      const { bucket, key } = locate(principal, rawPath, req.headers.host ?? '');
      reply.header('x-amz-request-id', req.id);
      return dispatch(core, multipart, kept, { req, reply, principal, bucket, key, query });
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

/** The operations a sub-resource names, by scope and method; any other is NotImplemented. */
const SUBRESOURCE_HANDLERS: Record<string, { bucket?: Handlers; object?: Handlers }> = {
  acl: {
    bucket: {
      GET: async (op) => (await requireBucket(op), xml(op.c, aclDocument(op.c.principal))),
      PUT: async (op) => (requireWriter(op.c.principal), await requireBucket(op), putAcl(op.c)),
    },
    object: {
      GET: async (op) => (await objectAt(op.view, op.c.key), xml(op.c, aclDocument(op.c.principal))),
      PUT: async (op) => (await changeableObject(op), putAcl(op.c)),
    },
  },
  delete: { bucket: { POST: (op) => deleteObjects(op) } },
  location: { bucket: { GET: async (op) => (await requireBucket(op), xml(op.c, document('LocationConstraint', []))) } },
  versioning: { bucket: { GET: async (op) => (await requireBucket(op), xml(op.c, document('VersioningConfiguration', []))) } },
  uploads: {
    bucket: { GET: (op) => op.mp.listUploads(op.c.reply, op.c.principal, op.c.bucket, op.c.query) },
    object: { POST: (op) => op.mp.create(op.c.reply, op.c.principal, op.view, op.c.bucket, op.c.key) },
  },
  uploadId: {
    object: {
      PUT: ({ mp, view, c }) => mp.uploadPart(c.reply, c.principal, view, { bucket: c.bucket, key: c.key }, c.query.get('uploadId')!, c.query.get('partNumber'), bodyOf(c), contentMd5(c.req)),
      POST: async ({ mp, view, c }) => mp.complete(c.reply, c.principal, view, c.query.get('uploadId')!, c.bucket, c.key, await readBody(c.req)),
      DELETE: ({ mp, c }) => mp.abort(c.reply, c.principal, c.query.get('uploadId')!, { bucket: c.bucket, key: c.key }),
      GET: ({ mp, c }) => mp.listParts(c.reply, c.principal, c.query.get('uploadId')!, c.bucket, c.key, c.query),
    },
  },
  partNumber: { object: { GET: (op) => getPart(op, false), HEAD: (op) => getPart(op, true) } },
  tagging: {
    object: {
      GET: async ({ view, tags, c }) => {
        const { p, obj } = await objectAt(view, c.key);
        return xml(c, taggingDocument(await tags.of(p, obj)));
      },
      PUT: async (op) => {
        const { p, obj } = await changeableObject(op);
        await op.tags.set(p, obj, tagsFromXml(await readBody(op.c.req)));
        return op.c.reply.code(200).send();
      },
      DELETE: async (op) => {
        const { p } = await changeableObject(op);
        await op.tags.drop(p);
        return op.c.reply.code(204).send();
      },
    },
  },
};

const methodNotAllowed = () => new S3Error(405, 'MethodNotAllowed', 'The specified method is not allowed against this resource.');

async function dispatch(core: Core, mp: Multipart, kept: Pick<Op, 'tags' | 'digests'>, c: S3Call): Promise<unknown> {
  const m = c.req.method as Method;
  const sub = subresourceOf(c.query);
  if (c.bucket === '') {
    if (sub !== undefined) throw notImplemented(`?${sub} on the service`);
    if (m !== 'GET') throw methodNotAllowed();
    return listBuckets(core, c);
  }
  const bucket = bucketOf(c.principal, c.bucket);
  const op: Op = { core, mp, ...kept, view: bucketView(core, c.principal, bucket, originOf(c.req, 's3')), c };
  const scope = c.key === '' ? 'bucket' : 'object';
  // Versioning is never enabled: the one version of an object is `null`, as S3 names it.
  const versionId = c.query.get('versionId');
  if (scope === 'object' && versionId !== undefined && versionId !== 'null') throw new S3Error(400, 'InvalidArgument', 'Invalid version id specified');
  if (sub !== undefined) {
    const handler = SUBRESOURCE_HANDLERS[sub]?.[scope]?.[m];
    if (!handler) throw notImplemented(`${m} ?${sub} on ${scope === 'bucket' ? 'a bucket' : 'an object'}`);
    return handler(op);
  }
  if (scope === 'bucket') {
    if (m === 'HEAD') return headBucket(op.view, c);
    if (m === 'PUT') throw new S3Error(409, 'BucketAlreadyOwnedByYou', 'Your previous request to create the named bucket succeeded and you already own it.');
    if (m === 'DELETE') throw new S3Error(409, 'BucketNotEmpty', 'Buckets are folders of the server; they are configured in s3_buckets.');
    if (m === 'GET') return listObjects(op.view, c);
    throw methodNotAllowed();
  }
  switch (m) {
    case 'GET':
    case 'HEAD':
      return getObject(op, m === 'HEAD');
    case 'PUT':
      return c.req.headers['x-amz-copy-source'] ? copyObject(op) : putObject(op);
    case 'DELETE':
      return deleteObject(op);
    default:
      throw methodNotAllowed();
  }
}

async function requireBucket(op: Op): Promise<void> {
  const obj = await op.view.find(op.view.virtual('/'));
  if (!obj?.isDir) throw new S3Error(404, 'NoSuchBucket', `The specified bucket does not exist: ${op.c.bucket}`);
}

/** The object of a request that changes its metadata (ACL, tags): a writer who may change it. */
async function changeableObject(op: Op) {
  requireWriter(op.c.principal);
  const found = await objectAt(op.view, op.c.key);
  op.view.requireCreate(found.p);
  return found;
}

/** GetObject / HeadObject of `partNumber`: an object not uploaded in parts is its part 1. */
async function getPart(op: Op, head: boolean) {
  const raw = op.c.query.get('partNumber')!;
  if (!/^\d{1,5}$/.test(raw) || Number(raw) < 1 || Number(raw) > 10_000) throw new S3Error(400, 'InvalidArgument', 'Part number must be an integer between 1 and 10000, inclusive');
  if (Number(raw) !== 1) throw new S3Error(416, 'InvalidPartNumber', 'The requested partnumber is not satisfiable');
  return getObject(op, head);
}


async function listBuckets(core: Core, c: S3Call) {
  const buckets: XmlNode[] = [];
  for (const b of c.principal.buckets) {
    const view = bucketView(core, c.principal, b, originOf(c.req, 's3'));
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

/** The modification time as sent when S3 wrote the object (finer than the storage keeps), else the storage's. */
function objectHeaders(reply: FastifyReply, obj: Obj, known: Known): void {
  reply.header('x-amz-meta-mtime', known.mtime ?? (obj.modified.getTime() / 1000).toFixed(3));
  reply.header('Accept-Ranges', 'bytes');
}

async function getObject({ core, view, digests, c }: Op, head: boolean) {
  const { p, obj } = await objectAt(view, c.key);
  const known = obj.isDir ? {} : await digests.of(p, obj, async () => (await view.openRead(p, 0, { recorded: false })).stream);
  objectHeaders(c.reply, obj, known);
  const etag = etagOf(obj, known.md5);
  if (head || obj.isDir) {
    return sendFile(c.req, c.reply, { name: obj.name || 'folder', size: obj.isDir ? 0 : obj.size, modified: obj.modified, etag, contentType: obj.isDir ? 'application/x-directory' : undefined, open: async () => (await import('node:stream')).Readable.from([]) }, { disposition: 'inline' });
  }
  const rangeError = invalidRange(c.req.headers.range, obj.size);
  if (rangeError) throw rangeError;
  const got = await view.download(p, { ip: c.req.ip, header: c.req.headers });
  return proxy(core, c.req, c.reply, got.link, obj.name, obj.hash, got.storage, etag, got);
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
  /** The MD5 of the decoded bytes once the body has ended (with `md5`), else undefined. */
  md5: () => string | undefined;
}

/**
 * The request body as the object's bytes: its declared SHA-256 checked (a signed payload),
 * aws-chunked decoded (chunk and trailer signatures checked), and its flexible checksum
 * (`x-amz-checksum-*`, as a header or as the trailer `x-amz-trailer` names) computed and
 * compared before the body ends, so a body that fails any check is never stored.
 */
function bodyOf(c: S3Call, opts: { md5?: boolean } = {}): Body {
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
  const tap = opts.md5 ? new Md5Tap() : undefined;
  if (tap) stages.push(tap);
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
    md5: () => tap?.md5,
  };
}

/** `x-amz-meta-mtime` (seconds, as rclone and s3cmd send it) as sent, when it is a time. */
function rawMtimeOf(h: FastifyRequest['headers']): string | undefined {
  const raw = h['x-amz-meta-mtime'] ?? h['x-amz-meta-src-last-modified'];
  if (typeof raw !== 'string' || !/^\d{1,12}(\.\d{1,9})?$/.test(raw.trim())) return undefined;
  return Number(raw) > 0 ? raw.trim() : undefined;
}

/** `x-amz-meta-mtime` as the stored modification time (the storage keeps milliseconds). */
function mtimeOf(h: FastifyRequest['headers']): Date | undefined {
  const raw = rawMtimeOf(h);
  return raw === undefined ? undefined : new Date(Number(raw) * 1000);
}

async function putObject({ view, tags, digests, c }: Op) {
  requireWriter(c.principal);
  const p = view.virtual(c.key);
  const tagSet = tagsFromHeader(c.req.headers['x-amz-tagging']);
  if (isFolderKey(c.key)) {
    const { stream } = bodyOf(c);
    for await (const chunk of stream) if ((chunk as Buffer).length) throw new S3Error(400, 'InvalidRequest', 'A key ending in "/" names a folder and takes no bytes.');
    await view.mkdir(p);
    const obj = await view.stat(p);
    await tags.set(p, obj, tagSet ?? []);
    return c.reply.code(200).header('ETag', etagOf(obj)).send();
  }
  const name = view.checkPut(p);
  const md5 = contentMd5(c.req);
  const { stream, size, failure, checksum, md5: computed } = bodyOf(c, { md5: true });
  // An empty Content-Type is no type: the storage's default (by the name) applies.
  const mimetype = c.req.headers['content-type']?.trim() || undefined;
  try {
    await view.put(p, { name, size, stream, modified: mtimeOf(c.req.headers), mimetype, hashes: md5 ? { md5 } : undefined }, true);
  } catch (err) {
    throw failure() ?? err;
  }
  const obj = await view.stat(p);
  // A new object has the tags its PUT names, none otherwise (as S3).
  await tags.set(p, obj, tagSet ?? []);
  const known = { md5: computed(), mtime: rawMtimeOf(c.req.headers) };
  await digests.remember(p, obj, known);
  const sum = checksum();
  if (sum) c.reply.header(sum.name, sum.value);
  return c.reply.code(200).header('ETag', etagOf(obj, known.md5)).send();
}

/** The `Content-MD5` header as hex, or undefined without one; a value that is no MD5 is InvalidDigest. */
export function contentMd5(req: FastifyRequest): string | undefined {
  const raw = req.headers['content-md5'];
  if (raw === undefined) return undefined;
  const md5 = Buffer.from(String(raw), 'base64');
  if (md5.length !== 16 || md5.toString('base64') !== String(raw).trim()) throw new S3Error(400, 'InvalidDigest', 'The Content-MD5 you specified was invalid.');
  return md5.toString('hex');
}

async function deleteObject(op: Op) {
  const { c } = op;
  requireWriter(c.principal);
  await removeKey(op, c.key);
  return c.reply.code(204).send();
}

/** Deletes a key, its tags and digest; a key that is not there is no error (S3 semantics). */
async function removeKey({ view, tags, digests }: Op, key: string): Promise<void> {
  const p = view.virtual(key);
  if (p === view.root) throw accessDenied('The bucket folder itself can not be deleted.');
  try {
    await view.removePath(p, isFolderKey(key) ? 'empty-folder' : 'file');
  } catch (err) {
    if (isKind(err, 'NotFound', 'Hidden')) return;
    if (isKind(err, 'BadRequest') && !isFolderKey(key)) return;
    throw err;
  }
  await tags.drop(p);
  await digests.drop(p);
}

async function deleteObjects(op: Op) {
  const { c } = op;
  requireWriter(c.principal);
  const body = await readBody(c.req);
  const del = body.Delete as { Object?: Array<{ Key?: string; VersionId?: string }>; Quiet?: string } | undefined;
  const objects = del?.Object ?? [];
  if (!del || objects.length > 1000) throw new S3Error(400, 'MalformedXML', 'The XML you provided was not well-formed.');
  const quiet = del.Quiet === 'true';
  const out: XmlNode[] = [];
  for (const o of objects) {
    const key = String(o.Key ?? '');
    try {
      if (key === '') throw new S3Error(400, 'InvalidArgument', 'A key is empty.');
      // Only the current version (`null`) exists: naming another deletes nothing.
      if (o.VersionId !== undefined && o.VersionId !== 'null') throw new S3Error(400, 'InvalidArgument', 'Invalid version id specified');
      await removeKey(op, key);
      if (!quiet) out.push(['Deleted', [['Key', key]]]);
    } catch (err) {
      const e = toS3Error(err);
      out.push(['Error', [['Key', key], ['Code', e.code], ['Message', e.message]]]);
    }
  }
  return xml(c, document('DeleteResult', out));
}

/** The bucket and key `x-amz-copy-source` names (`/bucket/key` or `bucket/key`, `?versionId=null` at most). */
function copySource(c: S3Call): { bucket: string; key: string } {
  const [raw, query = ''] = String(c.req.headers['x-amz-copy-source']).split('?', 2) as [string, string?];
  const versionId = new URLSearchParams(query).get('versionId');
  if (versionId !== null && versionId !== 'null') throw new S3Error(400, 'InvalidArgument', 'Invalid version id specified');
  const source = decodePath(raw.replace(/^\//, ''));
  const slash = source.indexOf('/');
  if (slash <= 0 || slash === source.length - 1) throw new S3Error(400, 'InvalidArgument', 'Copy Source must name a bucket and a key.');
  return { bucket: source.slice(0, slash), key: source.slice(slash + 1) };
}

async function copyObject({ core, view, tags, digests, c }: Op) {
  requireWriter(c.principal);
  const from = copySource(c);
  const directive = c.req.headers['x-amz-tagging-directive'] ?? 'COPY';
  if (directive !== 'COPY' && directive !== 'REPLACE') throw new S3Error(400, 'InvalidArgument', 'x-amz-tagging-directive must be COPY or REPLACE.');
  const srcView = bucketView(core, c.principal, bucketOf(c.principal, from.bucket), originOf(c.req, 's3'));
  const { p: src, obj } = await objectAt(srcView, from.key);
  if (obj.isDir) throw new S3Error(400, 'InvalidRequest', 'A folder can not be copied.');
  const tagSet = directive === 'COPY' ? await tags.of(src, obj) : (tagsFromHeader(c.req.headers['x-amz-tagging']) ?? []);
  const srcKnown = await digests.of(src, obj);
  const dst = view.virtual(c.key);
  const mtime = mtimeOf(c.req.headers);
  if (src === dst) {
    // A copy onto itself only changes metadata (rclone sets the modification time this way).
    if (mtime) await view.setModified(dst, mtime);
  } else {
    const whole = principalView(core, c.principal, originOf(c.req, 's3'));
    await whole.mkdir(path.posix.dirname(dst)).catch((err: unknown) => {
      if (!isKind(err, 'Exists')) throw err;
    });
    await whole.copyTo(src, dst, true);
    if (mtime && c.req.headers['x-amz-metadata-directive'] === 'REPLACE') await view.setModified(dst, mtime).catch(() => undefined);
  }
  const copied = await view.stat(dst);
  await tags.set(dst, copied, tagSet);
  // The same bytes: the source's MD5; the time the request set (as sent), or the source's.
  const md5 = srcKnown.md5 ?? (obj.hash?.md5 || undefined);
  const newTime = mtime && (src === dst || c.req.headers['x-amz-metadata-directive'] === 'REPLACE');
  await digests.remember(dst, copied, { md5, mtime: newTime ? rawMtimeOf(c.req.headers) : srcKnown.mtime });
  return xml(c, document('CopyObjectResult', [['LastModified', iso(copied.modified)], ['ETag', etagOf(copied, md5)]]));
}
