import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Core } from '../../core.js';
import { NotFound } from '../../errors.js';
import type { SettingItem } from '../../settings/defaults.js';
import { apiRoute } from '../route.js';
import { settingShape } from '../shapes.js';
import { adminChange } from '../admin-change.js';

const numberList = (v: string | undefined) =>
  (v ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean)
    .map(Number);

function byGroups(items: SettingItem[], q: { group?: string; groups?: string }): SettingItem[] {
  const groups = [...numberList(q.group), ...numberList(q.groups)];
  const picked = groups.length === 0 ? items : items.filter((i) => groups.includes(i.group));
  return [...picked].sort((a, b) => a.index - b.index);
}

const groupQuery = z.object({ group: z.string().optional(), groups: z.string().optional() });

/** `/api/admin/setting/*` (admin only). */
export function adminSettingRoutes(app: FastifyInstance, core: Core): void {
  apiRoute(app, core, {
    method: 'GET',
    url: '/api/admin/setting/list',
    output: z.array(settingShape),
    auth: 'admin',
    input: groupQuery,
    from: 'query',
    handler: ({ input }) => byGroups(core.settings.list(), input),
  });

  apiRoute(app, core, {
    method: 'GET',
    url: '/api/admin/setting/get',
    output: z.union([settingShape, z.array(settingShape)]),
    auth: 'admin',
    input: z.object({ key: z.string().optional(), keys: z.string().optional() }),
    from: 'query',
    handler: ({ input }) => {
      const one = (key: string) => {
        const item = core.settings.item(key);
        if (!item) throw new NotFound(`setting [${key}] not found`);
        return item;
      };
      if (input.keys) return input.keys.split(',').map((k) => one(k.trim()));
      return one(input.key ?? '');
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/admin/setting/save',
    output: z.null(),
    auth: 'admin',
    input: z.array(
      z.object({
        key: z.string({ error: 'key is required' }).min(1, 'key is required'),
        // Clients send strings; numbers and booleans are taken as their text.
        value: z.union([z.string(), z.number(), z.boolean()]).transform(String),
      }),
    ),
    handler: async (ctx) => {
      // One setting_update per key; values are not recorded (some are secrets).
      await adminChange(core, ctx, 'setting_update', ctx.input.map((i) => i.key), () => core.settings.saveMany(ctx.input));
      return null;
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/admin/setting/delete',
    output: z.object({}),
    auth: 'admin',
    input: z.object({ key: z.string({ error: 'key is required' }) }),
    from: 'query',
    handler: async ({ input }) => {
      await core.settings.deleteDeprecated(input.key);
      return {};
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/admin/setting/reset_token',
    output: z.string(),
    auth: 'admin',
    handler: () => core.settings.resetToken(),
  });

  apiRoute(app, core, {
    method: ['GET', 'POST'],
    url: '/api/admin/setting/default',
    output: z.array(settingShape),
    auth: 'admin',
    input: groupQuery,
    from: 'query',
    handler: ({ input }) =>
      byGroups(
        core.settings
          .builtin()
          .filter((d) => d.key !== 'token')
          .map((d, index) => ({ key: d.key, value: d.value, help: d.help ?? '', type: d.type, options: d.options ?? '', group: d.group, flag: d.flag, index })),
        input,
      ),
  });
}
