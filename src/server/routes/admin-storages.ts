import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Core } from '../../core.js';
import type { StorageRow } from '../../db/storages.js';
import { driverFactory, driverNames } from '../../drivers/registry.js';
import { driverInfo } from '../../drivers/form.js';
import { NotFound } from '../../errors.js';
import { isoTime } from '../../fs/objects.js';
import { mountDetailsOf } from '../mount-details.js';
import { apiRoute } from '../route.js';
import { driverInfoShape, pageShape, storageShape } from '../shapes.js';
import { boolish, int, pageOf, pageQuery } from '../validation.js';
import { adminChange } from '../admin-change.js';

const idQuery = z.object({ id: int() });

export const storageBody = z.object({
  id: int().optional(),
  mount_path: z.string({ error: 'mount_path is required' }),
  order: int().default(0),
  driver: z.string({ error: 'driver is required' }).min(1, 'driver is required'),
  cache_expiration: int().default(0),
  custom_cache_policies: z.string().default(''),
  addition: z
    .union([z.string(), z.record(z.string(), z.unknown())])
    .default('{}')
    .transform((v, ctx) => {
      const text = typeof v === 'string' ? v || '{}' : JSON.stringify(v);
      try {
        const parsed = JSON.parse(text);
        if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: `addition is not a JSON object: ${(err as Error).message}` });
        return z.NEVER;
      }
      return text;
    }),
  remark: z.string().default(''),
  disabled: boolish().default(false),
  disable_index: boolish().default(false),
  enable_sign: boolish().default(false),
  order_by: z.string().default(''),
  order_direction: z.string().default(''),
  extract_folder: z.string().default(''),
  web_proxy: boolish().default(false),
  webdav_policy: z.string().default(''),
  proxy_range: boolish().default(false),
  down_proxy_url: z.string().default(''),
  disable_proxy_sign: boolish().default(false),
  trash: z.enum(['', 'on', 'off']).default('').describe("deletes go to the storage's trash: '' the driver's default (on for Local without a recycle bin), on, off"),
  trash_days: int().pipe(z.number().int().min(0).max(36_500)).default(30).describe('days a trashed object is kept (0: until purged)'),
});

/** The Storage JSON of the wire: `modified` as a time, `status` as this process sees it. */
export function storageJson(core: Core, s: StorageRow) {
  return { ...s, status: core.storages.status(s), modified: isoTime(s.modified) };
}

/** storageJson plus OpenList's `mount_details` (disk usage) unless hide_storage_details_in_manage_page. */
async function manageJson(core: Core, s: StorageRow) {
  const json = storageJson(core, s);
  if (core.settings.getBool('hide_storage_details_in_manage_page')) return json;
  const mounted = core.storages.byId(s.id);
  const details = mounted ? await mountDetailsOf(mounted) : undefined;
  return details ? { ...json, mount_details: details } : json;
}

/** `/api/admin/storage/*` and `/api/admin/driver/*`. */
export function adminStorageRoutes(app: FastifyInstance, core: Core): void {
  storageReadRoutes(app, core);
  storageChangeRoutes(app, core);
  driverRoutes(app, core);
}

/** `/api/admin/storage/list|get`. */
function storageReadRoutes(app: FastifyInstance, core: Core): void {
  apiRoute(app, core, {
    method: 'GET',
    url: '/api/admin/storage/list',
    output: pageShape(storageShape),
    auth: 'admin',
    input: pageQuery,
    from: 'query',
    handler: async ({ input }) => {
      const { page, perPage } = pageOf(input);
      // A status as the mounts under way will leave it (not the row's, from before they began).
      await core.storages.ready();
      const { storages, total } = await core.repos.storages.list(page, perPage);
      return { content: await Promise.all(storages.map((s) => manageJson(core, s))), total };
    },
  });

  apiRoute(app, core, {
    method: 'GET',
    url: '/api/admin/storage/get',
    output: storageShape,
    auth: 'admin',
    input: idQuery,
    from: 'query',
    handler: async ({ input }) => {
      const s = await core.repos.storages.byId(input.id);
      if (!s) throw new NotFound('storage not found');
      await core.storages.ready();
      return manageJson(core, s);
    },
  });
}

/** `/api/admin/storage/create|update|delete|enable|disable|load_all`. */
function storageChangeRoutes(app: FastifyInstance, core: Core): void {
  apiRoute(app, core, {
    method: 'POST',
    url: '/api/admin/storage/create',
    // OpenList answers a mount path in use 500 (with data {id}).
    codes: [['Exists', 500]],
    output: z.object({ id: z.number().int() }),
    auth: 'admin',
    input: storageBody,
    handler: async (ctx) => adminChange(core, ctx, 'storage_create', ctx.input.mount_path, () => core.storages.create(ctx.input)),
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/admin/storage/update',
    // OpenList answers a mount path in use 500.
    codes: [['Exists', 500]],
    output: z.null(),
    auth: 'admin',
    input: storageBody.extend({ id: int() }),
    handler: async (ctx) => {
      await adminChange(core, ctx, 'storage_update', ctx.input.mount_path, () => core.storages.update(ctx.input));
      return null;
    },
  });

  for (const verb of ['delete', 'enable', 'disable'] as const) {
    apiRoute(app, core, {
      method: 'POST',
      url: `/api/admin/storage/${verb}`,
    output: z.null(),
      auth: 'admin',
      input: idQuery,
      from: 'query',
      handler: async (ctx) => {
        const name = core.storages.byId(ctx.input.id)?.row.mount_path ?? String(ctx.input.id);
        await adminChange(core, ctx, verb === 'delete' ? 'storage_delete' : 'storage_update', name, () => core.storages[verb](ctx.input.id));
        return null;
      },
    });
  }

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/admin/storage/load_all',
    output: z.null(),
    auth: 'admin',
    handler: () => {
      void core.storages.loadAll().catch((err) => core.log.error({ err }, 'reloading storages failed'));
      return null;
    },
  });
}

/** `/api/admin/driver/list|names|info`: the drivers and their forms. */
function driverRoutes(app: FastifyInstance, core: Core): void {
  apiRoute(app, core, {
    method: 'GET',
    url: '/api/admin/driver/list',
    output: z.record(z.string(), driverInfoShape),
    auth: 'admin',
    handler: () => Object.fromEntries(driverNames().map((n) => [n, driverInfo(driverFactory(n)!)])),
  });

  apiRoute(app, core, {
    method: 'GET',
    url: '/api/admin/driver/names',
    output: z.array(z.string()),
    auth: 'admin',
    handler: () => driverNames(),
  });

  apiRoute(app, core, {
    method: 'GET',
    url: '/api/admin/driver/info',
    output: driverInfoShape,
    auth: 'admin',
    input: z.object({ driver: z.string({ error: 'driver is required' }) }),
    from: 'query',
    handler: ({ input }) => {
      const f = driverFactory(input.driver);
      if (!f) throw new NotFound(`driver [${input.driver}] not found`);
      return driverInfo(f);
    },
  });
}

