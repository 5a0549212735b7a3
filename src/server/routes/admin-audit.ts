import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Core } from '../../core.js';
import { eventJson, MAX_PER_PAGE, parseFilter } from '../../audit/query.js';
import { apiRoute } from '../route.js';
import { auditEventShape, pageShape } from '../shapes.js';

const filter = z.string().optional();
const positive = (field: string, max: number) =>
  z.coerce.number({ error: `${field} must be a number` }).int(`${field} must be an integer`).min(1, `${field} must be at least 1`).max(max, `${field} must be at most ${max}`);

/** `/api/admin/audit/list`: the audit log (audit/log.ts), newest first, with filters (docs/audit-and-hooks.md). */
export function adminAuditRoutes(app: FastifyInstance, core: Core): void {
  apiRoute(app, core, {
    method: 'GET',
    url: '/api/admin/audit/list',
    output: pageShape(auditEventShape),
    auth: 'admin',
    from: 'query',
    input: z.object({
      user: filter,
      op: filter,
      front: filter,
      path: filter.describe('a prefix: the path and everything below it'),
      result: filter,
      since: filter.describe('ISO 8601, inclusive'),
      until: filter.describe('ISO 8601, exclusive'),
      page: positive('page', 1_000_000).default(1),
      per_page: positive('per_page', MAX_PER_PAGE).default(50),
    }),
    handler: async ({ input }) => {
      const f = parseFilter(input);
      // What was emitted just before is part of the answer.
      await core.audit.flush();
      const { events, total } = await core.repos.auditEvents.list(f, input.page, input.per_page);
      return { content: events.map(eventJson), total };
    },
  });
}
