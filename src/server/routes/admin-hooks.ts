import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { EVENT_OPS } from '../../audit/events.js';
import type { Core } from '../../core.js';
import { originOf } from '../../http/origin.js';
import { apiRoute } from '../route.js';
import { pageShape } from '../shapes.js';
import { int, pageOf, pageQuery } from '../validation.js';

/** A hook definition as sent; hooks/rules.ts checks what the types can't (known ops, globs, the action and its address). */
const hookBody = z.object({
  name: z.string({ error: 'name is required' }),
  events: z.array(z.string(), { error: 'events must be an array of operation names' }),
  paths: z.array(z.string()).default([]),
  users: z.array(z.string()).default([]),
  action: z.looseObject({ type: z.string({ error: 'action.type is required ("http" or "command")' }) }, { error: 'action is required' }),
  disabled: z.boolean().default(false),
});

const actionShape = z.union([
  z.object({ type: z.literal('http'), url: z.string(), secret: z.string().describe('always empty: the secret is write-only'), secret_set: z.boolean() }),
  z.object({ type: z.literal('command'), command: z.array(z.string()) }),
]);

export const hookShape = z.object({
  id: z.number().int(),
  name: z.string(),
  events: z.array(z.enum(EVENT_OPS)),
  paths: z.array(z.string()),
  users: z.array(z.string()),
  action: actionShape,
  disabled: z.boolean(),
  created_at: z.number().int(),
  updated_at: z.number().int(),
  pending: z.number().int().describe('deliveries waiting to be sent'),
  dead: z.number().int().describe('dead letters'),
});

const deadShape = z.object({
  id: z.number().int(),
  hook_id: z.number().int(),
  event: z.record(z.string(), z.unknown()),
  attempts: z.number().int(),
  last_error: z.string(),
  created_at: z.number().int(),
});

/** `/api/admin/hook/*` (admin only): event hooks and their dead letters. */
export function adminHookRoutes(app: FastifyInstance, core: Core): void {
  apiRoute(app, core, {
    method: 'GET',
    url: '/api/admin/hook/list',
    output: pageShape(hookShape),
    auth: 'admin',
    input: pageQuery,
    from: 'query',
    handler: ({ input }) => {
      const { page, perPage } = pageOf(input);
      return core.hooks.list(page, perPage);
    },
  });

  apiRoute(app, core, {
    method: 'GET',
    url: '/api/admin/hook/get',
    output: hookShape,
    auth: 'admin',
    input: z.object({ id: int() }),
    from: 'query',
    handler: ({ input }) => core.hooks.get(input.id),
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/admin/hook/create',
    output: hookShape,
    auth: 'admin',
    input: hookBody,
    handler: ({ input, principal, req }) => core.hooks.create(principal.user.username, input, originOf(req, 'api')),
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/admin/hook/update',
    output: hookShape,
    auth: 'admin',
    input: hookBody.extend({ id: int() }),
    handler: ({ input, principal, req }) => core.hooks.update(principal.user.username, input.id, input, originOf(req, 'api')),
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/admin/hook/delete',
    output: z.null(),
    auth: 'admin',
    input: z.object({ id: int() }),
    from: 'query',
    handler: async ({ input, principal, req }) => {
      await core.hooks.delete(principal.user.username, input.id, originOf(req, 'api'));
      return null;
    },
  });

  apiRoute(app, core, {
    method: 'GET',
    url: '/api/admin/hook/dead',
    output: pageShape(deadShape),
    auth: 'admin',
    input: pageQuery.extend({ id: int() }),
    from: 'query',
    handler: ({ input }) => {
      const { page, perPage } = pageOf(input);
      return core.hooks.dead(input.id, page, perPage);
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/admin/hook/resend',
    output: z.object({ resent: z.number().int() }),
    auth: 'admin',
    input: z.object({ ids: z.array(int(), { error: 'ids must be an array of dead letter ids' }) }),
    handler: async ({ input }) => ({ resent: await core.hooks.resend(input.ids) }),
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/admin/hook/purge',
    output: z.object({ purged: z.number().int() }),
    auth: 'admin',
    input: z.object({ ids: z.array(int()).optional(), hook_id: int().optional() }),
    handler: async ({ input }) => ({ purged: await core.hooks.purge({ ids: input.ids, hookId: input.hook_id }) }),
  });
}
