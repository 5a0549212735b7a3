import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isExpected } from '../errors.js';
import { envelopeCodeOf } from './api-codes.js';
import type { Settings } from '../settings/service.js';

export interface Envelope {
  code: number;
  message: string;
  data: unknown;
}

export const ok = (data: unknown = null): Envelope => ({ code: 200, message: 'success', data });

/** Masks matches of the `privacy_regs` setting (one regex per line) with `*`s, as the original. */
export class PrivacyMask {
  private source = '';
  private regexes: RegExp[] = [];

  constructor(private readonly settings: Settings) {}

  apply(message: string): string {
    const src = this.settings.get('privacy_regs');
    if (src !== this.source) {
      this.source = src;
      this.regexes = src
        .split('\n')
        .filter((l) => l.trim() !== '')
        .flatMap((l) => {
          try {
            return [new RegExp(l, 'g')];
          } catch {
            return [];
          }
        });
    }
    let out = message;
    for (const r of this.regexes) out = out.replace(r, (m) => '*'.repeat(m.length));
    return out;
  }
}

/** Framework errors (bad JSON, wrong content type, body too large, …) as client errors. */
function frameworkMessage(err: FastifyError): string | undefined {
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return `invalid JSON body: ${err.message}`;
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return 'request body is too large';
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return err.message;
    default:
      return err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500 ? err.message : undefined;
  }
}

/**
 * The one place errors become answers: HTTP 200 with `{code, message, data}`, the code from the
 * error's kind and the route's declared cases (server/api-codes.ts). Unexpected errors (kind
 * Internal, or no AppError) are logged with their stack and answered with a generic 500 and the
 * request id.
 */
export function sendError(err: unknown, req: FastifyRequest, reply: FastifyReply, mask: PrivacyMask): FastifyReply {
  let body: Envelope;
  if (isExpected(err)) {
    body = { code: envelopeCodeOf(err, req.routeOptions?.config?.apiCodes), message: mask.apply(err.message), data: err.data };
  } else {
    const fe = err as FastifyError;
    const known = typeof fe?.code === 'string' ? frameworkMessage(fe) : undefined;
    if (known !== undefined) {
      body = { code: 400, message: mask.apply(known), data: null };
    } else {
      req.log.error({ err }, 'unhandled error');
      body = { code: 500, message: `internal error (request ${req.id})`, data: null };
    }
  }
  if (reply.sent || reply.raw.headersSent) {
    reply.raw.destroy();
    return reply;
  }
  return reply.code(200).type('application/json; charset=utf-8').send(body);
}
