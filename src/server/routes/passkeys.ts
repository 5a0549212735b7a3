import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { fingerprint, type SiteAddress } from '../../auth/passkeys.js';
import type { Core } from '../../core.js';
import type { PasskeyCredential } from '../../db/webauthn.js';
import { isoTime } from '../../fs/objects.js';
import { apiRoute } from '../route.js';
import { passkeyShape } from '../shapes.js';
import { apiUrl } from '../../http/urls.js';
import { parseInput } from '../validation.js';

/** base64url text of at most `max` characters (the browser's encoding of binary fields). */
const b64 = (max: number) => z.string().max(max).regex(/^[A-Za-z0-9_-]*={0,2}$/, 'must be base64url');

const common = {
  id: b64(1400),
  rawId: b64(1400),
  type: z.literal('public-key'),
  clientExtensionResults: z.record(z.string(), z.unknown()).default({}),
  authenticatorAttachment: z.enum(['platform', 'cross-platform']).optional(),
};

/** `PublicKeyCredential.toJSON()` of `navigator.credentials.create()`. */
const registrationBody = z.object({
  ...common,
  response: z.object({
    clientDataJSON: b64(16_384),
    attestationObject: b64(262_144),
    transports: z.array(z.string().max(32)).max(8).optional(),
  }),
});

/** `PublicKeyCredential.toJSON()` of `navigator.credentials.get()`. */
const authenticationBody = z.object({
  ...common,
  response: z.object({
    clientDataJSON: b64(16_384),
    authenticatorData: b64(16_384),
    signature: b64(2_048),
    userHandle: b64(128).optional(),
  }),
});

const loginQuery = z.object({
  username: z.string().max(255).default(''),
  allowCredentials: z.string().max(8).default(''),
});

const SESSION_HEADER = { session: 'the `session` value the matching begin route answered (single use, 5 minutes)' };

const optionsShape = (what: string) =>
  z.object({
    options: z.object({ publicKey: z.record(z.string(), z.unknown()).describe(what) }),
    session: z.string().describe('send back in the `session` header of the finish route'),
  });

const credentialJson = (c: PasskeyCredential) => ({
  id: Buffer.from(c.credentialId, 'base64url').toString('base64'),
  fingerprint: fingerprint(c.aaguid),
  creator_ip: c.creatorIp,
  creator_ua: c.creatorUa,
  is_legacy: false,
  name: c.name,
  added_time: isoTime(c.addedTime),
  last_used_time: c.lastUsedTime > 0 ? isoTime(c.lastUsedTime) : '',
});

function site(core: Core, req: FastifyRequest): SiteAddress {
  const configured = /^https?:\/\//i.test(core.config.site_url);
  return { url: apiUrl(req, core.config.site_url), configured };
}

const client = (req: FastifyRequest) => ({ ip: req.ip, userAgent: String(req.headers['user-agent'] ?? '') });
const sessionOf = (req: FastifyRequest) => String(req.headers.session ?? '');
const noStore = (reply: FastifyReply) => reply.header('Cache-Control', 'no-store');

/** `/api/authn/*`: OpenList v4's passkey routes (WebAuthn), with the same paths, headers and answers. */
export function passkeyRoutes(app: FastifyInstance, core: Core): void {
  apiRoute(app, core, {
    method: 'GET',
    url: '/api/authn/webauthn_begin_registration',
    // The challenge store at capacity: 503.
    codes: [['Unavailable', 503]],
    output: optionsShape('PublicKeyCredentialCreationOptionsJSON for navigator.credentials.create()'),
    auth: 'user',
    handler: ({ principal, req, reply }) => {
      noStore(reply);
      return core.passkeys.beginRegistration(principal.user, site(core, req));
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/authn/webauthn_finish_registration',
    output: z.literal('Registered Successfully'),
    auth: 'user',
    headers: SESSION_HEADER,
    input: registrationBody,
    handler: async ({ input, principal, req }) => {
      await core.passkeys.finishRegistration(principal.user, sessionOf(req), input, client(req));
      return 'Registered Successfully';
    },
  });

  apiRoute(app, core, {
    method: 'GET',
    url: '/api/authn/webauthn_begin_login',
    // The challenge store at capacity: 503.
    codes: [['Unavailable', 503]],
    output: optionsShape('PublicKeyCredentialRequestOptionsJSON for navigator.credentials.get()')
      .extend({ require_username: z.boolean() })
      .or(z.object({ require_username: z.literal(true) })),
    auth: 'none',
    input: loginQuery,
    from: 'query',
    handler: ({ input, req, reply }) => {
      noStore(reply);
      return core.passkeys.beginLogin(input.username, input.allowCredentials, site(core, req), client(req));
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/authn/webauthn_finish_login',
    output: z.object({ token: z.string() }),
    auth: 'none',
    headers: SESSION_HEADER,
    input: authenticationBody,
    handler: async ({ input, req }) => {
      const { username } = parseInput(loginQuery, req.query);
      const token = await core.passkeys.finishLogin(username, sessionOf(req), input, client(req));
      return { token };
    },
  });

  apiRoute(app, core, {
    method: 'GET',
    url: '/api/authn/getcredentials',
    output: z.array(passkeyShape),
    auth: 'user',
    handler: async ({ principal }) => (await core.passkeys.list(principal.user)).map(credentialJson),
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/authn/delete_authn',
    output: z.literal('Deleted Successfully'),
    auth: 'user',
    input: z.object({ id: z.string({ error: 'id is required' }).min(1, 'id is required').max(2048) }),
    handler: async ({ input, principal }) => {
      await core.passkeys.remove(principal.user, input.id);
      return 'Deleted Successfully';
    },
  });
}
