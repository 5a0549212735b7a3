import type { FastifyRequest } from 'fastify';
import { UserDisabled } from '../../auth/accounts.js';
import type { Core } from '../../core.js';
import type { User } from '../../db/users.js';
import { AppError } from '../../errors.js';
import { DavError } from './errors.js';

export interface Caller {
  user: User;
  /** The password a guest gave in Basic auth, used as the path password (as OpenList). */
  password: string;
}

/** Basic (password or, for the guest, the path password), `Bearer <admin token>`, else the guest. */
export async function authenticate(core: Core, req: FastifyRequest): Promise<Caller> {
  const header = req.headers.authorization ?? '';
  const basic = /^basic\s+(.+)$/i.exec(header);
  const challenge = { 'WWW-Authenticate': 'Basic realm="alist"' };
  if (basic) {
    const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const username = colon >= 0 ? decoded.slice(0, colon) : decoded;
    const password = colon >= 0 ? decoded.slice(colon + 1) : '';
    const guest = await core.repos.users.byRole(1);
    if (guest && !guest.disabled && username === guest.username) return { user: guest, password };
    try {
      return { user: await core.accounts.checkPassword(username, password, req.ip, { front: 'webdav', ip: req.ip, requestId: String(req.id) }), password: '' };
    } catch (err) {
      if (err instanceof AppError && err.kind === 'TooManyRequests') throw new DavError(429, err.message);
      if (req.method === 'OPTIONS') return guestCaller(core, challenge);
      if (err instanceof UserDisabled) throw new DavError(403, err.message);
      throw new DavError(401, 'Unauthorized', challenge);
    }
  }
  const bearer = /^bearer\s+(.+)$/i.exec(header);
  if (bearer) {
    const adminToken = core.settings.get('token');
    if (adminToken !== '' && bearer[1]!.trim() === adminToken) return { user: await core.accounts.admin(), password: '' };
    if (req.method === 'OPTIONS') return guestCaller(core, challenge);
    throw new DavError(401, 'Unauthorized', challenge);
  }
  return guestCaller(core, challenge, req.method === 'OPTIONS');
}

async function guestCaller(core: Core, challenge: Record<string, string>, optional = true): Promise<Caller> {
  const guest = await core.repos.users.byRole(1);
  if (guest && !guest.disabled) return { user: guest, password: '' };
  if (optional) return { user: guest ?? ({ permission: 0, role: 1, basePath: '/', disabled: true } as User), password: '' };
  throw new DavError(401, 'Unauthorized', challenge);
}
