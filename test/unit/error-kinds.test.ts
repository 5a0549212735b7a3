// Every error kind on every front, from the fronts' own tables: the API envelope (code and
// message), WebDAV status, SFTP status, FTP reply and S3 error code; an unexpected error's text
// reaches no client and the API logs it with its stack and the request id.
import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { ObjectNotFound, StorageError, UploadIntegrityError } from '../../src/drivers/types.js';
import { AbortError, API_CODE, type ApiCodes, apiCodeOf, ERROR_KINDS, type ErrorKind, isAbort, isKind, KindError, Missing, NotFound } from '../../src/errors.js';
import { isDriverFault } from '../../src/fs/driver-errors.js';
import { replyOf } from '../../src/protocols/ftp/replies.js';
import { MSG_S3_INTERNAL, toS3Error } from '../../src/protocols/s3/errors.js';
import { statusOf, STATUS } from '../../src/protocols/sftp/status.js';
import { MSG_DAV_INTERNAL, toDavError } from '../../src/protocols/webdav/errors.js';
import { envelopeCodeOf } from '../../src/server/api-codes.js';
import { PrivacyMask, sendError } from '../../src/server/envelope.js';
import type { Settings } from '../../src/settings/service.js';

/** kind → [API code, WebDAV status, SFTP status, FTP reply, S3 status, S3 code]. */
const TABLE: Record<ErrorKind, [number, number, number, number, number, string]> = {
  BadRequest: [400, 400, STATUS.FAILURE, 553, 400, 'InvalidRequest'],
  Unauthorized: [401, 401, STATUS.PERMISSION_DENIED, 550, 403, 'AccessDenied'],
  OtpRequired: [402, 401, STATUS.PERMISSION_DENIED, 550, 403, 'AccessDenied'],
  Forbidden: [403, 403, STATUS.PERMISSION_DENIED, 550, 403, 'AccessDenied'],
  PasswordRequired: [403, 403, STATUS.PERMISSION_DENIED, 550, 403, 'AccessDenied'],
  Hidden: [403, 404, STATUS.NO_SUCH_FILE, 550, 404, 'NoSuchKey'],
  NotFound: [404, 404, STATUS.NO_SUCH_FILE, 550, 404, 'NoSuchKey'],
  Exists: [403, 412, STATUS.FAILURE, 550, 409, 'OperationAborted'],
  NotEmpty: [400, 409, STATUS.FAILURE, 550, 409, 'OperationAborted'],
  Conflict: [409, 409, STATUS.FAILURE, 451, 409, 'OperationAborted'],
  Integrity: [400, 400, STATUS.FAILURE, 451, 400, 'BadDigest'],
  Unsupported: [500, 501, STATUS.OP_UNSUPPORTED, 502, 501, 'NotImplemented'],
  TooLarge: [400, 507, STATUS.FAILURE, 552, 400, 'EntityTooLarge'],
  QuotaExceeded: [403, 507, STATUS.FAILURE, 552, 403, 'QuotaExceeded'],
  PathTooLong: [400, 414, STATUS.FAILURE, 553, 400, 'KeyTooLongError'],
  TooManyRequests: [429, 429, STATUS.FAILURE, 421, 503, 'SlowDown'],
  Upstream: [500, 502, STATUS.FAILURE, 451, 500, 'InternalError'],
  Unavailable: [500, 503, STATUS.FAILURE, 451, 503, 'ServiceUnavailable'],
  Internal: [500, 500, STATUS.FAILURE, 451, 500, 'InternalError'],
};

const noMask = new PrivacyMask({ get: () => '' } as unknown as Settings);

/** A Fastify app whose one route throws `err`, with its log lines collected. */
async function api(err: unknown, codes?: ApiCodes) {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      done();
    },
  });
  const app = Fastify({ logger: { level: 'info', stream } });
  app.setErrorHandler((e, req, reply) => sendError(e, req, reply, noMask));
  app.get('/x', { config: codes ? { apiCodes: codes } : {} }, async () => {
    throw err;
  });
  const res = await app.inject({ method: 'GET', url: '/x' });
  await app.close();
  return { body: res.json() as { code: number; message: string; data: unknown }, lines, reqId: res.headers['x-request-id'] ?? lines.find((l) => l.reqId)?.reqId };
}

describe('error kinds on every front', () => {
  it('the table names every kind', () => {
    expect(Object.keys(TABLE).sort()).toEqual([...ERROR_KINDS].sort());
    expect(Object.keys(API_CODE).sort()).toEqual([...ERROR_KINDS].sort());
  });

  for (const kind of ERROR_KINDS) {
    it(`${kind}: API, WebDAV, SFTP, FTP and S3 answers`, async () => {
      const [apiCode, dav, sftp, ftp, s3Status, s3Code] = TABLE[kind];
      const err = new KindError(kind, `the ${kind} text`);
      const { body } = await api(err);
      const expected = kind !== 'Internal';
      expect(body.code).toBe(apiCode);
      expect(body.message).toMatch(expected ? `the ${kind} text` : /^internal error \(request .+\)$/);
      expect(body.data).toBeNull();
      expect(toDavError(err).status).toBe(dav);
      expect(toDavError(err).message).toBe(expected ? `the ${kind} text` : MSG_DAV_INTERNAL);
      const st = statusOf(err);
      expect(st.code).toBe(sftp);
      expect(st.expected).toBe(expected);
      if (sftp === STATUS.NO_SUCH_FILE) expect(st.message).toBe('No such file');
      else expect(st.message).toBe(expected ? `the ${kind} text` : 'Failure');
      const fr = replyOf(err);
      expect(fr.code).toBe(ftp);
      expect(fr.expected).toBe(expected);
      if (kind !== 'NotFound' && kind !== 'Hidden') expect(fr.text).toBe(expected ? `the ${kind} text` : 'Local error in processing');
      const s3 = toS3Error(err);
      expect([s3.status, s3.code]).toEqual([s3Status, s3Code]);
      expect(s3.message).toBe(expected ? `the ${kind} text` : MSG_S3_INTERNAL);
    });
  }
});

describe('unexpected errors', () => {
  const secret = () => new Error('EACCES: open /srv/secret/host/path');

  it('no front sends their text', () => {
    const err = secret();
    expect(toDavError(err)).toMatchObject({ status: 500, message: MSG_DAV_INTERNAL });
    expect(statusOf(err)).toEqual({ code: STATUS.FAILURE, message: 'Failure', expected: false });
    expect(replyOf(err)).toEqual({ code: 451, text: 'Local error in processing', expected: false });
    expect(toS3Error(err)).toMatchObject({ status: 500, code: 'InternalError', message: MSG_S3_INTERNAL });
  });

  it('the API answers a fixed text with the request id and logs the error with its stack and request id', async () => {
    for (const err of [secret(), new KindError('Internal', 'internal detail /srv/secret')]) {
      const { body, lines } = await api(err);
      expect(body.code).toBe(500);
      expect(body.message).not.toContain('/srv/secret');
      const logged = lines.find((l) => l.msg === 'unhandled error') as { err?: { stack?: string }; reqId?: string } | undefined;
      expect(logged?.err?.stack).toContain('/srv/secret');
      expect(logged?.err?.stack).toMatch(/\n\s+at /);
      expect(body.message).toBe(`internal error (request ${logged?.reqId})`);
    }
  });

  it('an expected error is not logged as unhandled', async () => {
    const { lines } = await api(new NotFound('user not found'));
    expect(lines.some((l) => l.msg === 'unhandled error')).toBe(false);
  });
});

describe('driver errors are kinds', () => {
  it('ObjectNotFound is a missing object: kind NotFound, OpenList\'s 500 with its text on the API', async () => {
    const err = new ObjectNotFound();
    expect(isKind(err, 'NotFound')).toBe(true);
    expect(err).toBeInstanceOf(Missing);
    expect(await api(err).then((r) => r.body)).toEqual({ code: 500, message: 'object not found', data: null });
    expect(toDavError(err).status).toBe(404);
    expect(statusOf(err).code).toBe(STATUS.NO_SUCH_FILE);
    expect(toS3Error(err).code).toBe('NoSuchKey');
    // A missing record keeps its kind's 404.
    expect(envelopeCodeOf(new NotFound('user not found'))).toBe(404);
  });

  it('UploadIntegrityError is kind Integrity: 400 on the API, BadDigest on S3', async () => {
    const err = new UploadIntegrityError('md5 mismatch');
    expect(isKind(err, 'Integrity')).toBe(true);
    expect(await api(err).then((r) => r.body)).toEqual({ code: 400, message: 'md5 mismatch', data: null });
    expect(toS3Error(err).code).toBe('BadDigest');
  });

  it('a storage\'s refusal keeps its kind on the fronts and answers 500 on the API', async () => {
    const err = new StorageError('Exists', 'file exists');
    expect(toDavError(err).status).toBe(412);
    expect(await api(err).then((r) => r.body)).toEqual({ code: 500, message: 'file exists', data: null });
  });

  it('a route declares its own codes; the first matching rule wins, else the kind\'s', async () => {
    const err = new KindError('Exists', 'key with the same title already exists');
    expect((await api(err)).body.code).toBe(403);
    expect((await api(err, [['Exists', 500]])).body.code).toBe(500);
    expect(apiCodeOf(new ObjectNotFound(), [[Missing, 501], ['NotFound', 502]])).toBe(501);
    expect(apiCodeOf(new NotFound('x'), [[Missing, 501], ['NotFound', 502]])).toBe(502);
  });

  it('isDriverFault classifies by kind; cancellation is no fault', () => {
    expect(isDriverFault(new Error('backend unreachable'))).toBe(true);
    expect(isDriverFault(new KindError('Upstream', 'x'))).toBe(true);
    expect(isDriverFault(new ObjectNotFound())).toBe(false);
    expect(isDriverFault(new StorageError('Forbidden', 'permission denied by the file system'))).toBe(false);
    expect(isDriverFault(new AbortError('context canceled'))).toBe(false);
    expect(isDriverFault(new DOMException('x', 'AbortError'))).toBe(false);
    expect(isDriverFault(new Error('context canceled'))).toBe(true);
    expect(isAbort(new AbortError())).toBe(true);
  });
});
