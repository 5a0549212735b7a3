import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Core } from '../../core.js';
import type { UploadRow } from '../../db/uploads.js';
import { BadRequest } from '../../errors.js';
import { clientPath, optionsOf, receivedChunks, totalChunks } from '../../uploads/service.js';
import { closeAhead } from '../../uploads/staging.js';
import type { View } from '../../view/view.js';
import { ok } from '../envelope.js';
import type { RouteDoc } from '../route-table.js';
import { authenticate } from '../route.js';
import { uploadSnapshotShape } from '../shapes.js';
import { originOf } from '../../http/origin.js';

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function intHeader(req: FastifyRequest, name: string, label: string): number {
  const raw = header(req, name);
  const n = raw === undefined || !/^\d+$/.test(raw.trim()) ? NaN : Number(raw);
  if (!Number.isSafeInteger(n)) throw new BadRequest(`invalid or missing ${label} header`);
  return n;
}

function decodePath(raw: string | undefined, label: string): string {
  if (raw === undefined || raw === '') throw new BadRequest(`${label} is required`);
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new BadRequest(`${label} is not a valid URL-encoded path`);
  }
}

/** The declared hashes (X-File-Md5/Sha1/Sha256), checked against the assembled file. */
function declaredHashes(req: FastifyRequest): Record<string, string> {
  const hashes: Record<string, string> = {};
  for (const h of ['md5', 'sha1', 'sha256']) {
    const v = header(req, `x-file-${h}`);
    if (!v) continue;
    if (!/^[0-9a-fA-F]+$/.test(v)) throw new BadRequest(`X-File-${h[0]!.toUpperCase()}${h.slice(1)} is not a hex digest`);
    hashes[h] = v.toLowerCase();
  }
  return hashes;
}

/** OpenList's SessionSnapshot of an upload. */
export async function snapshot(core: Core, view: View, row: UploadRow) {
  const total = totalChunks(row);
  const received =
    row.state === 'completed' ? (total > 0 ? [[0, total - 1]] : []) : row.state === 'receiving' || row.state === 'completing' ? await receivedChunks(core.repos.uploads, row) : [];
  const first = received[0];
  const frontier = first && first[0] === 0 ? first[1]! + 1 : 0;
  const state = row.state === 'receiving' && row.error ? 'failed_retriable' : row.state;
  return {
    upload_id: row.id,
    state,
    attempt: row.attempt,
    path: clientPath(row, view),
    size: row.size,
    chunk_size: row.chunk_size,
    total_chunks: total,
    received,
    received_bytes: row.state === 'completed' ? row.size : row.received,
    frontier: row.state === 'completed' ? total : frontier,
    storage_progress: row.progress,
    ...(row.error ? { error: row.error } : {}),
  };
}

/**
 * OpenList's chunked upload: `POST /api/fs/multipart/init`, `PUT …/chunk`, `POST …/complete`,
 * `GET …/status`, `POST …/abort`, driven by headers. Chunks are staged in temp_dir and the file
 * is stored under its name only by complete (uploads/service.ts).
 */
export async function fsMultipartRoutes(app: FastifyInstance, core: Core): Promise<void> {
  await app.register(async (scope) => {
    // The chunk handler reads the request stream itself; the other routes carry no body.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_req, _payload, done) => done(null));

    /** The request's view; for an upload's request, its user's account as it is now (uploads/service.ts viewOf). */
    const viewFor = async (req: FastifyRequest, row?: UploadRow) => {
      const { user } = req.principal ?? (await authenticate(core, req, 'user'))!;
      core.uploads.requireEnabled();
      const password = header(req, 'password') || (row ? optionsOf(row).password : '');
      return row ? core.uploads.viewOf(core.views, row, { front: 'api', origin: originOf(req, 'api'), password }) : core.views.for(user, { front: 'api', origin: originOf(req, 'api'), password });
    };
    /** The caller's upload named by X-Upload-Id (or `upload_id` in the query), with a view holding its password. */
    const uploadOf = async (req: FastifyRequest, id: string | undefined) => {
      if (!id) throw new BadRequest('missing X-Upload-Id header');
      const probe = await viewFor(req);
      const row = await core.uploads.get(probe, id);
      return { row, view: await viewFor(req, row) };
    };
    const drain = (req: FastifyRequest) => async (err: unknown) => {
      req.raw.resume();
      throw err;
    };

    scope.post('/api/fs/multipart/init', { config: { doc: multipartDoc('init') } }, async (req: FastifyRequest, reply: FastifyReply) => {
      const view = await viewFor(req);
      const target = view.virtual(decodePath(header(req, 'file-path'), 'File-Path'));
      const size = intHeader(req, 'x-file-size', 'X-File-Size');
      if (size <= 0) throw new BadRequest('invalid or missing X-File-Size header');
      const chunkSize = header(req, 'x-chunk-size') === undefined ? undefined : intHeader(req, 'x-chunk-size', 'X-Chunk-Size');
      const lm = Number(header(req, 'last-modified'));
      const mimetype = header(req, 'content-type');
      const { row, resumed } = await core.uploads.create(
        view,
        {
          protocol: 'multipart',
          target,
          size,
          chunkSize,
          overwrite: header(req, 'overwrite') !== 'false',
          password: header(req, 'password') ?? '',
          hashes: declaredHashes(req),
          mimetype: mimetype && mimetype !== 'application/octet-stream' ? mimetype : undefined,
          modified: Number.isFinite(lm) && lm > 0 ? lm : undefined,
        },
        true,
      );
      return reply.send(ok({ ...(await snapshot(core, view, row)), resumed }));
    });

    scope.put('/api/fs/multipart/chunk', { config: { doc: multipartDoc('chunk') } }, async (req: FastifyRequest, reply: FastifyReply) => {
      const id = header(req, 'x-upload-id');
      // Opened while the token, the upload and the claim are checked; putChunk takes it over.
      const ahead = core.uploads.staging.openAhead(id);
      const { row, view, index, length } = await (async () => {
        const u = await uploadOf(req, id);
        const index = intHeader(req, 'x-chunk-index', 'X-Chunk-Index');
        const cl = header(req, 'content-length');
        return { ...u, index, length: cl === undefined ? undefined : Number(cl) };
      })().catch((err) => {
        closeAhead(ahead);
        return drain(req)(err);
      });
      const next = await core.uploads.putChunk(view, row, index, req.raw, length, ahead).catch(drain(req));
      return reply.send(ok(await snapshot(core, view, next)));
    });

    scope.post('/api/fs/multipart/complete', { config: { doc: multipartDoc('complete') } }, async (req: FastifyRequest, reply: FastifyReply) => {
      const { row, view } = await uploadOf(req, header(req, 'x-upload-id'));
      const done = await core.uploads.complete(view, row);
      return reply.send(ok(await snapshot(core, view, done)));
    });

    scope.get('/api/fs/multipart/status', { config: { doc: multipartDoc('status') } }, async (req: FastifyRequest, reply: FastifyReply) => {
      const q = req.query as Record<string, string | undefined>;
      if (q.upload_id) {
        const { row, view } = await uploadOf(req, q.upload_id);
        return reply.send(ok(await snapshot(core, view, row)));
      }
      const view = await viewFor(req);
      const size = Number(q.size);
      if (!q.path || !Number.isSafeInteger(size) || size <= 0) throw new BadRequest('upload_id, or path and size, are required');
      const row = await core.uploads.openTo(view, 'multipart', view.virtual(q.path), size);
      if (!row) return reply.send(ok(null));
      return reply.send(ok(await snapshot(core, view, row)));
    });

    scope.post('/api/fs/multipart/abort', { config: { doc: multipartDoc('abort') } }, async (req: FastifyRequest, reply: FastifyReply) => {
      const { row } = await uploadOf(req, header(req, 'x-upload-id'));
      await core.uploads.abort(row);
      return reply.send(ok(null));
    });
  });
}

/** The OpenAPI description of the chunked upload routes (driven by headers, not a JSON body). */
function multipartDoc(step: 'init' | 'chunk' | 'complete' | 'status' | 'abort'): RouteDoc {
  const password = { Password: 'the folder password, where one applies (init stores it for the later steps)' };
  const uploadId = { 'X-Upload-Id': 'the upload_id answered by init (required)' };
  switch (step) {
    case 'init':
      return {
        auth: 'user',
        summary: 'start (or resume) a chunked upload',
        headers: {
          'File-Path': 'URL-encoded path of the file to write (required)',
          'X-File-Size': 'the size of the whole file in bytes, above 0 (required)',
          'X-Chunk-Size': 'the chunk size in bytes, 65536 to 5 GiB or the whole file (optional; the server picks one otherwise)',
          Overwrite: '"false" refuses to replace an existing file',
          'Last-Modified': 'modification time in milliseconds since the epoch',
          'Content-Type': 'the MIME type of the file',
          'X-File-Md5': 'expected MD5 (hex); likewise X-File-Sha1, X-File-Sha256',
          ...password,
        },
        output: uploadSnapshotShape.extend({ resumed: z.boolean().describe('an unfinished upload of the same file and size was resumed') }),
      };
    case 'chunk':
      return {
        auth: 'user',
        summary: 'send one chunk: the request body is its bytes',
        body: 'binary',
        headers: { ...uploadId, 'X-Chunk-Index': 'the index of the chunk, from 0 (required)', 'Content-Length': 'the size of the chunk', ...password },
        output: uploadSnapshotShape,
      };
    case 'complete':
      return { auth: 'user', summary: 'store the file once every chunk is in', headers: { ...uploadId, ...password }, output: uploadSnapshotShape };
    case 'status':
      return {
        auth: 'user',
        summary: 'the state of an upload: by upload_id, or the unfinished upload to path of size',
        from: 'query',
        input: z.object({ upload_id: z.string().optional(), path: z.string().optional(), size: z.number().int().optional() }),
        headers: password,
        output: uploadSnapshotShape.nullable().describe('null when path and size name no unfinished upload'),
      };
    case 'abort':
      return { auth: 'user', summary: 'abandon an upload and drop its chunks', headers: { ...uploadId, ...password }, output: z.null() };
  }
}
