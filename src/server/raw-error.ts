// How a raw link (/d, /p and later /sd, /ad…) answers a failure: OpenList v4 gives the real
// HTTP status with a small HTML page (common.ErrorPage), never HTTP 200 with an error body, so
// a download tool does not store an error as the file's content. A client whose Accept asks
// for JSON gets the API envelope with the same status instead.

import type { FastifyReply, FastifyRequest } from 'fastify';
import { STATUS_CODES } from 'node:http';
import { AppError, type ErrorKind } from '../errors.js';
import type { PrivacyMask } from './envelope.js';

/**
 * Error kind → HTTP status, as OpenList's raw-link handlers answer: a missing, bad or expired
 * sign 401, a refused path or proxy 403; anything else that goes wrong behind a valid sign
 * (missing object or storage, driver failure) 500. A malformed request (a path over the
 * limits) is the client's, 400, and a throttled one 429.
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
  NotFound: 500,
  Exists: 500,
  Conflict: 500,
  NotEmpty: 500,
  Unsupported: 500,
  TooLarge: 500,
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
 * Share links answer as OpenList's dealErrorPage: the status is the code the API envelope would
 * carry (`the share does not exist` 500, `wrong share code` 403, a wrong archive password 202).
 */
export function envelopeStatus(err: unknown): number {
  return err instanceof AppError && err.code >= 200 && err.code < 600 ? err.code : 500;
}

export function sendRawError(err: unknown, req: FastifyRequest, reply: FastifyReply, mask: PrivacyMask, statusOf: (err: unknown) => number = rawLinkStatus): FastifyReply {
  const status = statusOf(err);
  let message: string;
  if (err instanceof AppError) {
    message = mask.apply(err.message);
  } else {
    req.log.error({ err }, 'raw link failed');
    message = `internal error (request ${req.id})`;
  }
  if (reply.sent || reply.raw.headersSent) {
    reply.raw.destroy();
    return reply;
  }
  reply.code(status).header('Cache-Control', 'no-store');
  if (wantsJson(req)) return reply.type('application/json; charset=utf-8').send({ code: status, message, data: null });
  return reply.type('text/html; charset=utf-8').send(errorPage(status, message));
}
