import type { EventFilter, StoredEvent } from '../db/audit-events.js';
import { BadRequest } from '../errors.js';
import { EVENT_OPS } from './events.js';

export const FRONTS = ['api', 'raw', 'share', 'webdav', 'sftp', 'ftp', 's3', 'wopi', 'task', 'cli'] as const;
export const RESULTS = ['ok', 'BadRequest', 'Unauthorized', 'OtpRequired', 'Forbidden', 'PasswordRequired', 'Hidden', 'NotFound', 'Exists', 'NotEmpty', 'Conflict', 'Unsupported', 'TooLarge', 'QuotaExceeded', 'PathTooLong', 'TooManyRequests', 'Upstream', 'Unavailable', 'Internal'] as const;

/** Events per page at most (the list route and `atrium audit --limit`). */
export const MAX_PER_PAGE = 1000;

/** The filters as a client gives them: strings, times in ISO 8601. */
export interface FilterInput {
  user?: string;
  op?: string;
  front?: string;
  path?: string;
  result?: string;
  since?: string;
  until?: string;
}

const ISO = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

function time(field: string, v: string | undefined): number | undefined {
  if (v === undefined || v === '') return undefined;
  const t = ISO.test(v) ? Date.parse(v) : NaN;
  if (Number.isNaN(t)) throw new BadRequest(`${field} is not an ISO 8601 time: ${v}`);
  return t;
}

function oneOf(field: string, v: string | undefined, allowed: readonly string[]): string | undefined {
  if (v === undefined || v === '') return undefined;
  if (!allowed.includes(v)) throw new BadRequest(`unknown ${field} ${JSON.stringify(v)} (one of ${allowed.join(', ')})`);
  return v;
}

/** Checks and converts the filters (the list route and the CLI): a bad one is a BadRequest naming it. */
export function parseFilter(input: FilterInput): EventFilter {
  const path = input.path === undefined || input.path === '' ? undefined : input.path;
  if (path !== undefined && !path.startsWith('/')) throw new BadRequest(`path must start with /: ${path}`);
  const f: EventFilter = {
    user: input.user === '' ? undefined : input.user,
    op: oneOf('op', input.op, EVENT_OPS),
    front: oneOf('front', input.front, FRONTS),
    result: oneOf('result', input.result, RESULTS),
    path,
    since: time('since', input.since),
    until: time('until', input.until),
  };
  if (f.since !== undefined && f.until !== undefined && f.since > f.until) throw new BadRequest('since is after until');
  return f;
}

/** An event as the API and `atrium audit --json` answer it (time in ISO 8601). */
export function eventJson(e: StoredEvent) {
  return { id: e.id, time: new Date(e.time).toISOString(), user: e.user, front: e.front, op: e.op, path: e.path, dst_path: e.dst_path, bytes: e.bytes, result: e.result, ip: e.ip, request_id: e.request_id };
}
