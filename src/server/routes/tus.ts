import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Core } from '../../core.js';
import type { UploadRow } from '../../db/uploads.js';
import { BadRequest, type ErrorKind, isExpected, NotFound } from '../../errors.js';
import { ChecksumMismatch, optionsOf } from '../../uploads/service.js';
import type { View } from '../../view/view.js';
import type { RouteDoc } from '../route-table.js';
import { authenticate } from '../route.js';
import { originOf } from '../../http/origin.js';

export const TUS_PATH = '/api/fs/tus/';
const VERSION = '1.0.0';
const EXTENSIONS = 'creation,termination,checksum,expiration';
const CHECKSUMS = ['md5', 'sha1', 'sha256'];
const OFFSET_TYPE = 'application/offset+octet-stream';
/** The headers a browser client must be allowed to read (CORS). */
export const TUS_EXPOSED = ['Location', 'Upload-Offset', 'Upload-Length', 'Upload-Metadata', 'Upload-Expires', 'Tus-Resumable', 'Tus-Version', 'Tus-Extension', 'Tus-Max-Size', 'Tus-Checksum-Algorithm'];

/** The tus answer of each error kind (plain text bodies, as tus servers answer). */
const STATUS_OF: Partial<Record<ErrorKind, number>> = {
  BadRequest: 400,
  Unauthorized: 401,
  OtpRequired: 401,
  Forbidden: 403,
  PasswordRequired: 403,
  Hidden: 404,
  NotFound: 404,
  Exists: 409,
  Conflict: 409,
  Integrity: 460,
  TooLarge: 413,
  QuotaExceeded: 403,
  PathTooLong: 400,
  TooManyRequests: 429,
  Unsupported: 501,
};

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** `key base64,key2 base64` → values (a key without a value is ''). */
export function parseMetadata(raw: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (!raw) return out;
  for (const pair of raw.split(',')) {
    const [key, value, extra] = pair.trim().split(' ');
    if (!key || extra !== undefined) throw new BadRequest('Upload-Metadata is malformed');
    if (value !== undefined && !/^[A-Za-z0-9+/]*={0,2}$/.test(value)) throw new BadRequest(`Upload-Metadata ${key} is not base64`);
    out.set(key, value === undefined ? '' : Buffer.from(value, 'base64').toString('utf8'));
  }
  return out;
}

function size(raw: string | undefined, label: string): number {
  const n = raw !== undefined && /^\d+$/.test(raw.trim()) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n)) throw new BadRequest(`${label} is missing or not a number`);
  return n;
}

/**
 * tus 1.0 (core, creation, termination, checksum, expiration) at `/api/fs/tus/` on the machinery
 * of the multipart routes: `POST` creates an upload for the full path in `Upload-Metadata` key
 * `path` (below the user's base path, as File-Path), `HEAD` tells the offset, `PATCH` appends,
 * `DELETE` terminates. The last PATCH stores the file before it answers.
 */
export async function tusRoutes(app: FastifyInstance, core: Core): Promise<void> {
  await app.register(async (scope) => {
    speaksTus(scope);
    const access = tusAccess(core);
    scope.options('/api/fs/tus', { config: { doc: tusDoc('options') } }, options);
    scope.options('/api/fs/tus/', { config: { doc: tusDoc('options') } }, options);
    scope.options('/api/fs/tus/:id', { config: { doc: tusDoc('options') } }, options);
    const create = creation(core, access);
    scope.post('/api/fs/tus', { config: { doc: tusDoc('create') } }, create);
    scope.post('/api/fs/tus/', { config: { doc: tusDoc('create') } }, create);
    uploadRoutes(scope, core, access);
  });
}

/** The scope answers by the tus protocol: bodies left to the handlers, errors as plain text, Tus-Resumable required. */
function speaksTus(scope: FastifyInstance): void {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('*', (_req, _payload, done) => done(null));

  scope.setErrorHandler((err, req, reply) => {
    req.raw.resume();
    if (err instanceof ChecksumMismatch) return reply.code(460).type('text/plain').send(err.message);
    const status = isExpected(err) ? (STATUS_OF[err.kind] ?? 500) : 500;
    if (status === 500) req.log.error({ err, url: req.url }, 'tus request failed');
    reply.header('Tus-Resumable', VERSION);
    return reply
      .code(status)
      .type('text/plain; charset=utf-8')
      .send(isExpected(err) ? err.message : 'internal error');
  });

  scope.addHook('onRequest', async (req, reply) => {
    reply.header('Tus-Resumable', VERSION);
    if (req.method === 'OPTIONS') return;
    const asked = header(req, 'tus-resumable');
    if (asked !== VERSION) {
      reply.header('Tus-Version', VERSION);
      return reply.code(412).type('text/plain').send('Tus-Resumable 1.0.0 is required');
    }
  });
}

/** OPTIONS: what this server speaks of tus. */
function options(_req: FastifyRequest, reply: FastifyReply) {
  reply.header('Tus-Version', VERSION).header('Tus-Extension', EXTENSIONS).header('Tus-Checksum-Algorithm', CHECKSUMS.join(','));
  return reply.code(204).send();
}

type TusAccess = ReturnType<typeof tusAccess>;

/** The caller's view and uploads. */
function tusAccess(core: Core) {
  const viewFor = async (req: FastifyRequest, password = '') => {
    const { user } = req.principal ?? (await authenticate(core, req, 'user'))!;
    core.uploads.requireEnabled();
    return core.views.for(user, { front: 'api', origin: originOf(req, 'api'), password });
  };
  /** The caller's upload, with its user's view as the account is now (uploads/service.ts viewOf). */
  const uploadOf = async (req: FastifyRequest): Promise<{ row: UploadRow; view: View }> => {
    const { id } = req.params as { id: string };
    const row = await core.uploads.get(await viewFor(req), id);
    if (row.protocol !== 'tus') throw new NotFound('upload not found');
    return { row, view: await core.uploads.viewOf(core.views, row, { front: 'api', origin: originOf(req, 'api'), password: optionsOf(row).password }) };
  };
  const expires = (reply: FastifyReply, row: UploadRow) => {
    const at = core.uploads.expiresAt(row);
    if (at && row.state === 'receiving') reply.header('Upload-Expires', at.toUTCString());
  };
  return { viewFor, uploadOf, expires };
}

/** POST: creates an upload for the path in Upload-Metadata (an empty one is stored at once). */
function creation(core: Core, { viewFor, expires }: TusAccess) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    if (header(req, 'upload-defer-length') !== undefined) throw new BadRequest('Upload-Defer-Length is not supported; send Upload-Length');
    const length = size(header(req, 'upload-length'), 'Upload-Length');
    const rawMeta = header(req, 'upload-metadata');
    const meta = parseMetadata(rawMeta);
    let clientPath = meta.get('path');
    if (!clientPath) throw new BadRequest('Upload-Metadata must carry the target path under the key path');
    if (clientPath.endsWith('/') && meta.get('filename')) clientPath += meta.get('filename');
    const password = meta.get('password') ?? '';
    const view = await viewFor(req, password);
    const lm = Number(meta.get('lastModified') ?? meta.get('last_modified'));
    const { row } = await core.uploads.create(view, {
      protocol: 'tus',
      target: view.virtual(clientPath),
      size: length,
      overwrite: meta.get('overwrite') !== 'false',
      password,
      hashes: Object.fromEntries(['md5', 'sha1', 'sha256'].filter((h) => meta.get(h)).map((h) => [h, meta.get(h)!.toLowerCase()])),
      mimetype: meta.get('filetype') || meta.get('type') || undefined,
      modified: Number.isFinite(lm) && lm > 0 ? lm : undefined,
      metadata: rawMeta,
    });
    req.raw.resume();
    const done = length === 0 ? await core.uploads.complete(view, row) : row;
    expires(reply, done);
    return reply.code(201).header('Location', `${TUS_PATH}${row.id}`).header('Upload-Offset', String(done.received)).send();
  };
}

/** HEAD tells the offset, PATCH appends (the last one stores the file), DELETE terminates. */
function uploadRoutes(scope: FastifyInstance, core: Core, { uploadOf, expires }: TusAccess): void {
  scope.head('/api/fs/tus/:id', { config: { doc: tusDoc('head') } }, async (req, reply) => {
    const { row } = await uploadOf(req);
    if (row.state === 'failed_permanent' || row.state === 'aborted') return reply.code(410).send();
    reply.header('Cache-Control', 'no-store').header('Upload-Length', String(row.size));
    reply.header('Upload-Offset', String(row.state === 'completed' ? row.size : row.received));
    const meta = optionsOf(row).metadata;
    if (meta) reply.header('Upload-Metadata', meta);
    expires(reply, row);
    return reply.code(200).send();
  });

  scope.patch('/api/fs/tus/:id', { config: { doc: tusDoc('patch') } }, async (req, reply) => {
    if ((header(req, 'content-type') ?? '').split(';')[0]!.trim() !== OFFSET_TYPE) {
      req.raw.resume();
      return reply.code(415).type('text/plain').send(`Content-Type must be ${OFFSET_TYPE}`);
    }
    const { row, view } = await uploadOf(req);
    const offset = size(header(req, 'upload-offset'), 'Upload-Offset');
    let checksum: { algorithm: string; digest: string } | undefined;
    const rawSum = header(req, 'upload-checksum');
    if (rawSum) {
      const [algorithm, digest] = rawSum.trim().split(' ');
      if (!algorithm || !digest || !CHECKSUMS.includes(algorithm)) throw new BadRequest(`Upload-Checksum algorithm must be one of ${CHECKSUMS.join(', ')}`);
      checksum = { algorithm, digest };
    }
    // A PATCH at the end retries a completion that failed.
    const cl = header(req, 'content-length');
    const declared = cl !== undefined && /^\d+$/.test(cl) ? Number(cl) : undefined;
    let next = offset === row.size && row.received === row.size ? row : await core.uploads.append(view, row, offset, req.raw, { checksum, declared });
    if (next.received === next.size && next.state !== 'completed') next = await core.uploads.complete(view, next);
    expires(reply, next);
    return reply.code(204).header('Upload-Offset', String(next.received)).send();
  });

  scope.delete('/api/fs/tus/:id', { config: { doc: tusDoc('delete') } }, async (req, reply) => {
    const { row } = await uploadOf(req);
    await core.uploads.abort(row);
    return reply.code(204).send();
  });
}

/**
 * The OpenAPI description of the tus routes. They answer by the tus protocol (a status code,
 * tus headers and an empty body; errors as plain text), never the JSON envelope.
 */
function tusDoc(step: 'options' | 'create' | 'head' | 'patch' | 'delete'): RouteDoc {
  const resumable = { 'Tus-Resumable': '"1.0.0" (required)' };
  switch (step) {
    case 'options':
      return {
        auth: 'none',
        summary: 'tus: the server\'s capabilities',
        rawResponse: { description: 'tus protocol: 204 with Tus-Version, Tus-Extension and Tus-Checksum-Algorithm headers and no body (not the JSON envelope)' },
      };
    case 'create':
      return {
        auth: 'user',
        summary: 'tus creation: start an upload',
        headers: {
          ...resumable,
          'Upload-Length': 'the size of the file in bytes (required; Upload-Defer-Length is not supported)',
          'Upload-Metadata': 'tus metadata; key path (required) is the target path, also filename, filetype, password, overwrite, lastModified, md5, sha1, sha256',
        },
        rawResponse: { description: 'tus protocol: 201 with Location and Upload-Offset headers and no body; errors are a status code with a plain-text message (not the JSON envelope)' },
      };
    case 'head':
      return {
        auth: 'user',
        summary: 'tus: the offset of an upload',
        headers: resumable,
        rawResponse: { description: 'tus protocol: 200 with Upload-Offset, Upload-Length, Upload-Metadata, Upload-Expires headers and no body; 410 for a failed or aborted upload' },
      };
    case 'patch':
      return {
        auth: 'user',
        summary: 'tus: append bytes at Upload-Offset, at least 64 KiB unless they end the upload (the last PATCH stores the file)',
        body: 'binary',
        headers: {
          ...resumable,
          'Content-Type': '"application/offset+octet-stream" (required)',
          'Upload-Offset': 'the offset the body starts at (required)',
          'Upload-Checksum': 'tus checksum: the algorithm and the base64 digest of the body',
        },
        rawResponse: { description: 'tus protocol: 204 with Upload-Offset (and Upload-Expires) headers and no body; 460 on a checksum mismatch; errors as plain text (not the JSON envelope)' },
      };
    case 'delete':
      return {
        auth: 'user',
        summary: 'tus termination: abandon an upload',
        headers: resumable,
        rawResponse: { description: 'tus protocol: 204 and no body; errors as plain text (not the JSON envelope)' },
      };
  }
}
