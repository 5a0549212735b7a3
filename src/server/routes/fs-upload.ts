import { randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Core } from '../../core.js';
import { writeUploadTo } from '../../drivers/write-file.js';
import type { UploadStream } from '../../drivers/types.js';
import { BadRequest } from '../../errors.js';
import { STATE, taskJson } from '../../tasks/manager.js';
import { throttled } from '../../net/speed-limit.js';
import { ok } from '../envelope.js';
import { authenticate } from '../route.js';
import type { RouteDoc } from '../route-table.js';
import { taskShape } from '../shapes.js';
import { originOf } from '../../http/origin.js';

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The upload headers shared by /put and /form (wire-api.md §6.8). */
function uploadHeaders(req: FastifyRequest) {
  const raw = header(req, 'file-path');
  if (raw === undefined || raw === '') throw new BadRequest('File-Path is required');
  let filePath: string;
  try {
    filePath = decodeURIComponent(raw);
  } catch {
    throw new BadRequest('File-Path is not a valid URL-encoded path');
  }
  const lm = Number(header(req, 'last-modified'));
  const hashes: Record<string, string> = {};
  for (const h of ['md5', 'sha1', 'sha256']) {
    const v = header(req, `x-file-${h}`);
    if (v) {
      if (!/^[0-9a-fA-F]+$/.test(v)) throw new BadRequest(`X-File-${h.toUpperCase()} is not a hex digest`);
      hashes[h] = v.toLowerCase();
    }
  }
  return {
    filePath,
    asTask: header(req, 'as-task') === 'true',
    overwrite: header(req, 'overwrite') !== 'false',
    password: header(req, 'password') ?? '',
    modified: Number.isFinite(lm) && lm > 0 ? new Date(lm) : undefined,
    hashes,
  };
}

/**
 * `PUT /api/fs/put` (raw body) and `PUT /api/fs/form` (multipart part `file`). Bodies stream
 * straight into the driver's put, which writes a temporary file and renames it into place only
 * when complete. With `As-Task: true` the body is spooled into temp_dir first and the put runs
 * as an `upload` task.
 */
export async function fsUploadRoutes(app: FastifyInstance, core: Core): Promise<void> {
  await app.register(async (scope) => {
    // No body parser runs here: the handlers read the request stream themselves.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_req, _payload, done) => done(null));
    await scope.register(multipart, { limits: { fileSize: Number.MAX_SAFE_INTEGER, files: 1, fields: 10 } });

    const handle = async (req: FastifyRequest, reply: FastifyReply, body: () => Promise<{ stream: Readable; size: number; mimetype?: string }>) => {
      const { user } = (await authenticate(core, req, 'user'))!;
      const h = uploadHeaders(req);
      const view = core.views.for(user, { front: 'api', origin: originOf(req, 'api'), password: h.password });
      const target = view.virtual(h.filePath);
      let name: string;
      try {
        name = view.checkPut(target);
      } catch (err) {
        req.raw.resume();
        throw err;
      }
      const { stream: raw, size, mimetype } = await body();
      // Bytes from the client pass the client upload limit (max_client_upload_speed).
      const stream = throttled(raw, core.speed.clientUpload) as Readable;
      const up: UploadStream = { name, size, stream, modified: h.modified, mimetype, hashes: h.hashes };
      if (!h.asTask) {
        await view.put(target, up, h.overwrite);
        return reply.send(ok(null));
      }
      const spooled = await spool(core, up);
      const task = await view
        .putAsTask(target, { name, temp: spooled.file, modified: h.modified?.getTime(), mimetype, hashes: h.hashes }, h.overwrite)
        .catch(async (err) => {
          await rm(spooled.file, { force: true });
          throw err;
        });
      // A task canceled before it ran never reaches its own cleanup.
      void task.done.then(async () => {
        if (task.state === STATE.CANCELED) await rm(spooled.file, { force: true });
      });
      return reply.send(ok({ task: taskJson(task) }));
    };

    scope.put('/api/fs/put', { config: { doc: uploadDoc('binary') } }, (req, reply) =>
      handle(req, reply, async () => {
        const declared = header(req, 'content-length') ?? header(req, 'x-file-size');
        if (declared === undefined) throw new BadRequest('Content-Length is required');
        const size = Number(declared);
        if (!Number.isSafeInteger(size) || size < 0) throw new BadRequest(`Content-Length is not a size: ${declared}`);
        return { stream: req.raw, size, mimetype: header(req, 'content-type') };
      }),
    );

    scope.put('/api/fs/form', { config: { doc: uploadDoc('multipart') } }, (req, reply) =>
      handle(req, reply, async () => {
        if (!req.isMultipart()) throw new BadRequest('the body must be multipart/form-data with a part named file');
        // A multipart type without a usable boundary is the client's mistake, not a server fault.
        const part = await req.file().catch((err: Error) => {
          throw new BadRequest(`the multipart body can not be read: ${err.message}`);
        });
        if (!part || part.fieldname !== 'file') throw new BadRequest('the multipart body has no part named file');
        return { stream: part.file, size: -1, mimetype: part.mimetype };
      }),
    );
  });
}

/** The OpenAPI description of the two upload routes (their bodies are streamed, not parsed). */
function uploadDoc(body: 'binary' | 'multipart'): RouteDoc {
  return {
    auth: 'user',
    summary: body === 'binary' ? 'upload a file: the request body is its bytes' : 'upload a file as the multipart part "file"',
    body,
    headers: {
      'File-Path': 'URL-encoded path of the file to write (required)',
      'As-Task': '"true" runs the upload as a task (the answer carries it)',
      Overwrite: '"false" refuses to replace an existing file',
      'Last-Modified': 'modification time in milliseconds since the epoch',
      Password: 'the folder password, where one applies',
      'X-File-Md5': 'expected MD5 (hex); likewise X-File-Sha1, X-File-Sha256',
      ...(body === 'binary' ? { 'Content-Length': 'the size of the body (required; or X-File-Size)' } : {}),
    },
    output: z.union([z.null(), z.object({ task: taskShape })]),
  };
}

/** Folder of temp_dir where As-Task uploads wait for their task. */
export const UPLOAD_SPOOL = 'uploads';

/** Receives the whole body into temp_dir (checked against the declared size and hashes). */
async function spool(core: Core, up: UploadStream): Promise<{ file: string; size: number }> {
  const dir = path.join(core.config.temp_dir, UPLOAD_SPOOL);
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, randomBytes(12).toString('hex'));
  try {
    const size = await writeUploadTo(file, up);
    return { file, size };
  } catch (err) {
    await rm(file, { force: true });
    throw new BadRequest((err as Error).message);
  }
}
