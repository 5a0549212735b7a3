import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Core } from '../../core.js';
import { COMPARE_MODES } from '../../fs/compare.js';
import { CONFLICT_RULES, DELETE_PHASES, SYNC_MODES } from '../../sync/job.js';
import { taskJson } from '../../tasks/manager.js';
import { apiRoute } from '../route.js';
import { pageShape, taskShape } from '../shapes.js';
import { int, pageOf, pageQuery } from '../validation.js';

const sizeOrAge = z.union([z.number(), z.string().max(32)]).nullable().optional();

/** A job as sent: sizes and ages may be numbers (bytes, seconds) or rclone's `10M`, `7d`; src/sync/job.ts checks the rest. */
const jobBody = z.object({
  name: z.string({ error: 'name is required' }).max(100),
  src: z.string({ error: 'src is required' }).max(4096),
  dst: z.string({ error: 'dst is required' }).max(4096),
  mode: z.enum(SYNC_MODES).optional(),
  compare: z.enum(COMPARE_MODES).optional(),
  filters: z
    .object({
      include: z.array(z.string().max(1024)).max(100).optional(),
      exclude: z.array(z.string().max(1024)).max(100).optional(),
      min_size: sizeOrAge,
      max_size: sizeOrAge,
      min_age: sizeOrAge,
      max_age: sizeOrAge,
    })
    .optional(),
  schedule: z.object({ cron: z.string().max(200).optional(), time_zone: z.string().max(64).optional() }).nullable().optional(),
  options: z
    .object({
      bandwidth_limit: z.number().int().optional().describe('KiB/s, 0: none'),
      transfers: z.number().int().optional(),
      delete_phase: z.enum(DELETE_PHASES).optional(),
      max_deletes: z.number().int().optional().describe('-1: no limit'),
      dry_run: z.boolean().optional(),
      conflict: z.enum(CONFLICT_RULES).optional(),
      modify_window: z.number().int().optional().describe('ms'),
      keep_reports: z.number().int().optional(),
    })
    .optional(),
  disabled: z.boolean().optional(),
});

const tally = z.object({ files: z.number().int(), bytes: z.number() });
const item = z.object({ path: z.string(), side: z.enum(['src', 'dst']), size: z.number(), reason: z.string() });

export const syncReportShape = z.object({
  dry_run: z.boolean(),
  copied: tally,
  updated: tally,
  deleted: tally,
  skipped: tally,
  failed: tally,
  failures: z.array(z.object({ path: z.string(), reason: z.string() })),
  items: z.object({ copied: z.array(item), updated: z.array(item), deleted: z.array(item) }),
  duration_ms: z.number(),
});

export const syncRunShape = z.object({
  id: z.number().int(),
  job_id: z.number().int(),
  task_id: z.string(),
  dry_run: z.boolean(),
  state: z.enum(['queued', 'running', 'succeeded', 'failed', 'canceled']),
  started_at: z.number().int(),
  finished_at: z.number().int(),
  error: z.string(),
  report: syncReportShape,
});

export const syncJobShape = z.object({
  id: z.number().int(),
  name: z.string(),
  src: z.string(),
  dst: z.string(),
  mode: z.enum(SYNC_MODES),
  compare: z.enum(COMPARE_MODES),
  filters: z.object({
    include: z.array(z.string()),
    exclude: z.array(z.string()),
    min_size: z.number().nullable(),
    max_size: z.number().nullable(),
    min_age: z.number().nullable(),
    max_age: z.number().nullable(),
  }),
  schedule: z.object({ cron: z.string(), time_zone: z.string() }),
  options: z.object({
    bandwidth_limit: z.number().int(),
    transfers: z.number().int(),
    delete_phase: z.enum(DELETE_PHASES),
    max_deletes: z.number().int(),
    dry_run: z.boolean(),
    conflict: z.enum(CONFLICT_RULES),
    modify_window: z.number().int(),
    keep_reports: z.number().int(),
  }),
  disabled: z.boolean(),
  owner: z.string(),
  owner_id: z.number().int(),
  next_run: z.number().int().describe('ms since the epoch of the next scheduled run; 0: none'),
  running: z.boolean(),
  created_at: z.number().int(),
  updated_at: z.number().int(),
  last_run: syncRunShape.nullable(),
});

/** `/api/admin/sync/*` (admin only): sync jobs, their runs and reports (docs/sync-and-trash.md). */
export function adminSyncRoutes(app: FastifyInstance, core: Core): void {
  apiRoute(app, core, {
    method: 'GET',
    url: '/api/admin/sync/list',
    output: pageShape(syncJobShape),
    auth: 'admin',
    input: pageQuery,
    from: 'query',
    handler: ({ input }) => {
      const { page, perPage } = pageOf(input);
      return core.sync.list(page, perPage);
    },
  });

  apiRoute(app, core, {
    method: 'GET',
    url: '/api/admin/sync/get',
    output: syncJobShape.extend({ reports: z.array(syncRunShape) }),
    auth: 'admin',
    input: z.object({ id: int() }),
    from: 'query',
    handler: ({ input }) => core.sync.get(input.id),
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/admin/sync/create',
    output: syncJobShape,
    auth: 'admin',
    input: jobBody,
    handler: ({ input, principal }) => core.sync.create(principal.user, input),
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/admin/sync/update',
    output: syncJobShape,
    auth: 'admin',
    input: jobBody.extend({ id: int() }),
    handler: ({ input }) => core.sync.update(input.id, input),
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/admin/sync/delete',
    output: z.null(),
    auth: 'admin',
    input: z.object({ id: int() }),
    from: 'query',
    handler: async ({ input }) => {
      await core.sync.delete(input.id);
      return null;
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/admin/sync/run',
    output: z.object({ task: taskShape }),
    auth: 'admin',
    input: z.object({ id: int() }),
    from: 'query',
    handler: async ({ input }) => ({ task: taskJson(await core.sync.run(input.id)) }),
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/admin/sync/dry_run',
    output: syncReportShape,
    auth: 'admin',
    input: z.object({ id: int() }),
    from: 'query',
    handler: ({ input }) => core.sync.dryRun(input.id),
  });
}
