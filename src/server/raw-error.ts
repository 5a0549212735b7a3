// How a raw link (/d, /p and later /sd, /ad…) answers a failure: OpenList v4 gives the real
// HTTP status with a small HTML page (common.ErrorPage), never HTTP 200 with an error body, so
// a download tool does not store an error as the file's content. A client whose Accept asks
// for JSON gets the API envelope with the same status instead.

import type { FastifyReply, FastifyRequest } from 'fastify';
import { STATUS_CODES } from 'node:http';
import { AppError, type ErrorKind, isExpected } from '../errors.js';
import { envelopeCodeOf } from './api-codes.js';
import type { PrivacyMask } from './envelope.js';

/**
 * Error kind → HTTP status: a missing, bad or expired sign 401, a refused path or proxy 403, as
 * OpenList's raw-link handlers answer. Unlike OpenList (500 for all of these), what the client
 * asked wrongly is a client error with OpenList's message: a missing object or archive entry 404,
 * a folder or a path over the limits 400; a throttled request 429; what goes wrong on the
 * server's side (a driver failure, a storage that is down) 500.
 */
const STATUS_OF: Record<ErrorKind, number> = {
  Unauthorized: 401,
  OtpRequired: 401,
  PasswordRequired: 401,
  Forbidden: 403,
  Hidden: 403,
  BadRequest: 400,
  PathTooLong: 400,
  TooManyRequests: 429,
  NotFound: 404,
  Integrity: 400,
  Exists: 500,
  Conflict: 500,
  NotEmpty: 500,
  Unsupported: 500,
  TooLarge: 500,
  QuotaExceeded: 403,
  Upstream: 500,
  Unavailable: 500,
  Internal: 500,
};

export function rawLinkStatus(err: unknown): number {
  return err instanceof AppError ? STATUS_OF[err.kind] : 500;
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** OpenList's error page: the status line as title and heading, the message below a rule. */
export function errorPage(status: number, message: string): string {
  const line = `${status} ${STATUS_CODES[status] ?? ''}`.trim();
  return `<!DOCTYPE html>
<html lang="en">
	<head>
		<meta charset="utf-8" />
		<meta name="viewport" content="width=device-width, initial-scale=1" />
		<meta name="color-scheme" content="dark light" />
		<meta name="robots" content="noindex" />
		<title>${line}</title>
	</head>
	<body>
		<h1>${line}</h1>
		<hr>
		<p>${escapeHtml(message)}</p>
	</body>
</html>`;
}

const wantsJson = (req: FastifyRequest) => /\bapplication\/json\b/i.test(String(req.headers.accept ?? ''));

/**
 * Share links answer with OpenList's dealErrorPage and message: the status is the code the API
 * envelope carries when it is under 500 (`wrong share code` 403, a wrong archive password 202);
 * where OpenList answers 500 for a refusal (the share missing, deleted, disabled, expired or at
 * its access limit, an entry missing) the status is the kind's, as for raw links (404), so that
 * a refused download is a client error; a failure of the server's own stays 500.
 */
export function envelopeStatus(err: unknown): number {
  if (!isExpected(err)) return 500;
  const code = envelopeCodeOf(err);
  return code >= 200 && code < 500 ? code : rawLinkStatus(err);
}

/** The code of the API envelope a share link answers to a client asking JSON (OpenList's, 500 included). */
export function envelopeCode(err: unknown): number {
  return isExpected(err) ? envelopeCodeOf(err) : 500;
}

export function sendRawError(
  err: unknown,
  req: FastifyRequest,
  reply: FastifyReply,
  mask: PrivacyMask,
  statusOf: (err: unknown) => number = rawLinkStatus,
  codeOf: (err: unknown, status: number) => number = (_err, status) => status,
): FastifyReply {
  const status = statusOf(err);
  let message: string;
  if (isExpected(err)) {
    message = mask.apply(err.message);
  } else {
    req.log.error({ err, reqId: req.id }, 'raw link failed');
    message = `internal error (request ${req.id})`;
  }
  if (reply.sent || reply.raw.headersSent) {
    reply.raw.destroy();
    return reply;
  }
  reply.code(status).header('Cache-Control', 'no-store');
  if (wantsJson(req)) return reply.type('application/json; charset=utf-8').send({ code: codeOf(err, status), message, data: null });
  return reply.type('text/html; charset=utf-8').send(errorPage(status, message));
}
