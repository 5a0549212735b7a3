import { availableParallelism } from 'node:os';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Core } from '../core.js';
import type { WopiTokens } from '../wopi/tokens.js';
import { FairQueue } from './fair-queue.js';

/** The setting: requests one principal may have running at once (0: no limit). */
export const PER_USER_SETTING = 'max_requests_per_user';
/** The setting: seconds a request past its principal's limit may wait before `429`. */
export const WAIT_SETTING = 'max_request_wait';

/** The default of `max_requests_per_user`: 8 per CPU core of this machine. */
export const defaultPerUser = (): number => 8 * availableParallelism();

/** Waiting requests one principal may have, times its limit; past that a request is refused at once. */
const WAITING_PER_SLOT = 64;
const DEFAULT_WAIT_S = 30;

/** The API and the raw links (/d /p, shares' /sd /sad, archives' /ad /ap /ae): bounded per principal. */
const PER_PRINCIPAL = /^\/(?:api|d|p|sd|sad|ad|ap|ae)(?:[/?]|$)/;
/** Never queued: liveness is answered whatever one user does. */
const NEVER = /^\/ping(?:\?|$)/;

/**
 * Who a request counts for: the signed-in user (every token and app password of one user is
 * one principal), else the client address (guests, share visitors, signed links). A credential
 * that does not resolve counts for its address; the route answers it as usual.
 */
async function principalKey(core: Core, req: FastifyRequest, wopi: WopiTokens): Promise<string> {
  const office = wopiPrincipal(wopi, req);
  if (office) return office;
  const header = req.headers.authorization;
  if (header && header.trim() !== '') {
    try {
      const { user } = await core.accounts.resolve(header);
      return `u:${user.id}`;
    } catch {
      // answered by the route
    }
  }
  return `ip:${req.ip}`;
}

const WOPI_CALLBACK = /^\/api\/wopi\/files\/([A-Za-z0-9_-]+)(?:[/?]|$)/;

/**
 * A WOPI callback counts for the user its access token names: an online office calls back for
 * every user from one address, which would otherwise put all their editors in one queue.
 */
function wopiPrincipal(tokens: WopiTokens, req: FastifyRequest): string | undefined {
  const m = WOPI_CALLBACK.exec(req.url);
  const q = req.url.indexOf('?');
  if (!m || q < 0) return undefined;
  try {
    return `u:${tokens.verify(new URLSearchParams(req.url.slice(q + 1)).get('access_token') ?? undefined, m[1]!).userId}`;
  } catch {
    return undefined; // answered by the route
  }
}

function tooBusy(req: FastifyRequest, retryAfter: number) {
  const message = `too many requests of this user at once; try again in ${retryAfter} s`;
  return req.url.startsWith('/api/') || req.url === '/api'
    ? { type: 'application/json; charset=utf-8', body: JSON.stringify({ code: 429, message, data: null }) }
    : { type: 'text/plain; charset=utf-8', body: `${message}\n` };
}

/**
 * Fair under load (ARCHITECTURE.md): each principal's API and raw-link requests run at most
 * `max_requests_per_user` at once; more wait in that principal's own queue, served round-robin
 * with the other principals' queues, so one user's storm waits behind itself while others are
 * served. The config's `max_connections` bounds all requests together (the same queues; other
 * requests — the web UI, WebDAV — queue by address with no bound of their own). A wait is
 * bounded by `max_request_wait` seconds (and 64 waiting per slot): then `429` with
 * `Retry-After`, in the API envelope for `/api`. `/ping` is never queued.
 */
export function fairRequests(app: FastifyInstance, core: Core, maxConnections: number): FairQueue {
  const perUser = () => {
    const n = core.settings.getNumber(PER_USER_SETTING, defaultPerUser());
    return n > 0 ? n : 0;
  };
  const waitMs = () => {
    const s = core.settings.getNumber(WAIT_SETTING, DEFAULT_WAIT_S);
    return (s > 0 ? s : DEFAULT_WAIT_S) * 1000;
  };
  const queue = new FairQueue({
    perKey: (key) => (key.startsWith('o:') ? 0 : perUser()),
    total: () => maxConnections,
    waitMs,
    maxWaiting: () => WAITING_PER_SLOT * Math.max(perUser(), maxConnections, 1),
  });
  const wopi = core.wopi.tokens;
  const releases = new WeakMap<FastifyRequest, () => void>();
  const admit = async (req: FastifyRequest, key: string) => {
    const socket = req.raw.socket;
    let gone: (() => void) | undefined;
    const got = await queue.acquire(key, (abort) => {
      gone = abort;
      socket?.once('close', abort);
    });
    if (gone) socket?.removeListener('close', gone);
    return got;
  };
  app.addHook('onRequest', (req, reply, done) => {
    if (NEVER.test(req.url)) return done();
    const bounded = PER_PRINCIPAL.test(req.url);
    if (!bounded && maxConnections <= 0) return done();
    if (bounded && perUser() <= 0 && maxConnections <= 0) return done();
    const keyed = bounded ? principalKey(core, req, wopi) : Promise.resolve(`o:${req.ip}`);
    keyed
      .then((key) => admit(req, key))
      .then((release) => {
        if (release) {
          releases.set(req, release);
          return done();
        }
        const retryAfter = Math.max(1, Math.ceil(waitMs() / 1000 / 4));
        const answer = tooBusy(req, retryAfter);
        reply.code(429).header('Retry-After', String(retryAfter)).type(answer.type).send(answer.body);
      }, done);
  });
  const release = (req: FastifyRequest) => {
    releases.get(req)?.();
    releases.delete(req);
  };
  app.addHook('onResponse', (req, _reply, done) => {
    release(req);
    done();
  });
  app.addHook('onRequestAbort', (req, done) => {
    release(req);
    done();
  });
  return queue;
}
