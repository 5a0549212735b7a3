import type { FastifyInstance, FastifyRequest } from 'fastify';
import type * as QRCodeModule from 'qrcode';
import { lazyRequire } from '../../util/lazy-require.js';
import { z } from 'zod';
import { Accounts, userJson } from '../../auth/accounts.js';
import { isGuest } from '../../auth/permissions.js';
import { newTotpSecret } from '../../auth/totp.js';
import type { Core } from '../../core.js';
import type { User } from '../../db/users.js';
import { BadRequest, Forbidden } from '../../errors.js';
import { ANY, apiRoute } from '../route.js';
import { userShape } from '../shapes.js';
import { originOf } from '../../http/origin.js';

const loginBody = z.object({
  username: z.string().min(1, 'username is required'),
  password: z.string().default(''),
  otp_code: z.string().default(''),
});

function client(req: FastifyRequest) {
  return { ip: req.ip, userAgent: String(req.headers['user-agent'] ?? '') };
}

/**
 * `/api/me`: the user, with Atrium's usage of the user's own root while the user has a quota
 * (usage is kept only then; without one, /api/me reads nothing from the database).
 */
async function meJson(core: Core, user: User) {
  if (!((user.quotaBytes ?? 0) > 0 || (user.quotaFiles ?? 0) > 0)) return userJson(user, true);
  const used = await core.quotas.usage({ kind: 'user', id: user.id });
  return { ...userJson(user, true), used_bytes: used.bytes, used_files: used.files };
}

/** Login, logout, 2FA, and the caller's own account (`/api/auth/*`, `/api/me*`). */
const loadQrcode = lazyRequire<typeof QRCodeModule>('qrcode');

export function authRoutes(app: FastifyInstance, core: Core): void {
  apiRoute(app, core, {
    method: 'POST',
    url: '/api/auth/login',
    output: z.object({ token: z.string() }),
    auth: 'none',
    input: loginBody,
    handler: async ({ input, req }) => {
      const token = await core.accounts.login({
        ...client(req),
        username: input.username,
        hash: Accounts.hashForLogin(input.password),
        otpCode: input.otp_code,
      }, originOf(req, 'api'));
      return { token };
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/auth/login/hash',
    output: z.object({ token: z.string() }),
    auth: 'none',
    input: loginBody,
    handler: async ({ input, req }) => {
      if (input.password === '') throw new BadRequest('password is empty');
      const token = await core.accounts.login({ ...client(req), username: input.username, hash: input.password, otpCode: input.otp_code }, originOf(req, 'api'));
      return { token };
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/auth/login/ldap',
    output: z.object({ token: z.string() }),
    auth: 'none',
    input: loginBody,
    handler: async ({ input, req }) => {
      const token = await core.accounts.loginLdap({ ...client(req), username: input.username, password: input.password, otpCode: input.otp_code }, originOf(req, 'api'));
      return { token };
    },
  });

  apiRoute(app, core, {
    method: ANY,
    url: '/api/auth/logout',
    output: z.null(),
    auth: 'user',
    handler: async ({ principal }) => {
      await core.accounts.logout(principal);
      return null;
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/auth/2fa/generate',
    output: z.object({ qr: z.string(), secret: z.string() }),
    auth: 'user',
    handler: async ({ principal }) => {
      if (isGuest(principal.user)) throw new Forbidden('Guest user can not generate 2FA code');
      const { secret, uri } = newTotpSecret(principal.user.username);
      const qr = await loadQrcode().toDataURL(uri, { width: 400, margin: 1 });
      return { qr, secret };
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/auth/2fa/verify',
    output: z.null(),
    auth: 'user',
    input: z.object({ code: z.string().min(1, 'code is required'), secret: z.string().min(1, 'secret is required'), current_code: z.string().default('') }),
    handler: async ({ input, principal, req }) => {
      await core.accounts.enable2fa(principal.user, input.secret, input.code, req.ip, input.current_code);
      return null;
    },
  });

  apiRoute(app, core, {
    method: 'GET',
    url: '/api/me',
    output: userShape,
    auth: 'user',
    handler: ({ principal }) => meJson(core, principal.user),
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/me/update',
    output: z.null(),
    auth: 'user',
    input: z.object({ username: z.string().optional(), password: z.string().optional(), sso_id: z.string().optional() }),
    handler: async ({ input, principal }) => {
      await core.accounts.updateMe(principal.user, input);
      return null;
    },
  });
}
