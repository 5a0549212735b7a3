import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Core } from '../../core.js';
import type { Share } from '../../db/shares.js';
import type { User } from '../../db/users.js';
import { BadRequest } from '../../errors.js';
import type { ShareInput } from '../../shares/service.js';
import { ANY, apiRoute } from '../route.js';
import { pageShape, shareShape } from '../shapes.js';
import { boolish, int, pageOf, pageQuery } from '../validation.js';
import { originOf } from '../../http/origin.js';

/** OpenList's SharingResp: the share's fields, `files`, and its creator's name and role. */
export function shareJson(s: Share, creator: User | undefined) {
  return {
    id: s.id,
    files: s.files,
    expires: s.expires > 0 ? new Date(s.expires).toISOString() : null,
    pwd: s.pwd,
    accessed: s.accessed,
    max_accessed: s.maxAccessed,
    disabled: s.disabled,
    remark: s.remark,
    readme: s.readme,
    header: s.header,
    creator: creator?.username ?? '',
    creator_role: creator?.role ?? 0,
  };
}

/** `expires`: an RFC 3339 time, or null / '' / 0 for never. */
const expiresField = z
  .union([z.string(), z.number(), z.null()])
  .optional()
  .transform((v, ctx) => {
    if (v === null || v === undefined || v === '' || v === 0) return 0;
    const t = typeof v === 'number' ? v : Date.parse(v);
    if (!Number.isFinite(t)) {
      ctx.addIssue({ code: 'custom', message: 'expires must be an RFC 3339 time or null' });
      return z.NEVER;
    }
    // A time at or before 1970 is the zero time of Go clients: never.
    return t <= 0 ? 0 : t;
  });

const shareBody = z.object({
  id: z.string().default(''),
  new_id: z.string().default(''),
  files: z.array(z.string()).default([]),
  expires: expiresField,
  pwd: z.string().max(255).default(''),
  max_accessed: int().default(0),
  accessed: int().default(0),
  disabled: boolish().default(false),
  remark: z.string().default(''),
  readme: z.string().default(''),
  header: z.string().default(''),
  creator: z.string().default(''),
});

const toInput = (b: z.infer<typeof shareBody>): ShareInput => ({
  id: b.id,
  newId: b.new_id,
  files: b.files,
  expires: b.expires,
  pwd: b.pwd,
  maxAccessed: b.max_accessed,
  accessed: b.accessed,
  disabled: b.disabled,
  remark: b.remark,
  readme: b.readme,
  header: b.header,
  creator: b.creator || undefined,
});

const idQuery = z.object({ id: z.string().default('') });

/** `/api/share/*`: a user manages their own shares, an admin everyone's (OpenList v4). */
export function shareRoutes(app: FastifyInstance, core: Core): void {
  const creatorOf = (s: Share) => core.repos.users.byId(s.creatorId);

  apiRoute(app, core, {
    method: ANY,
    url: '/api/share/list',
    output: pageShape(shareShape),
    auth: 'user',
    from: 'any',
    input: pageQuery,
    handler: async ({ input, principal, req }) => {
      const { page, perPage } = pageOf(input);
      const { shares, total } = await core.shares.list(principal.user, page, perPage);
      const names = new Map<number, User | undefined>();
      for (const s of shares) if (!names.has(s.creatorId)) names.set(s.creatorId, await creatorOf(s));
      return { content: shares.map((s) => shareJson(s, names.get(s.creatorId))), total };
    },
  });

  apiRoute(app, core, {
    method: 'GET',
    url: '/api/share/get',
    output: shareShape,
    auth: 'user',
    from: 'query',
    input: idQuery,
    handler: async ({ input, principal, req }) => {
      const s = await core.shares.owned(principal.user, input.id);
      return shareJson(s, await creatorOf(s));
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/share/create',
    output: shareShape,
    auth: 'user',
    input: shareBody,
    handler: async ({ input, principal, req }) => {
      const { share, creator } = await core.shares.create(principal.user, toInput(input), originOf(req, 'api'));
      return shareJson(share, creator);
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/share/update',
    output: shareShape,
    auth: 'user',
    input: shareBody,
    handler: async ({ input, principal, req }) => {
      if (input.id === '') throw new BadRequest('id is required');
      const { share, creator } = await core.shares.update(principal.user, toInput(input), originOf(req, 'api'));
      return shareJson(share, creator);
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/share/delete',
    output: z.null(),
    auth: 'user',
    from: 'query',
    input: idQuery,
    handler: async ({ input, principal, req }) => {
      await core.shares.delete(principal.user, input.id, originOf(req, 'api'));
    },
  });

  for (const [verb, disabled] of [['enable', false], ['disable', true]] as const) {
    apiRoute(app, core, {
      method: 'POST',
      url: `/api/share/${verb}`,
      output: z.null(),
      auth: 'user',
      from: 'query',
      input: idQuery,
      handler: async ({ input, principal, req }) => {
        await core.shares.setDisabled(principal.user, input.id, disabled);
      },
    });
  }
}
