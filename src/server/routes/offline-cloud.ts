import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Core } from '../../core.js';
import { BadRequest } from '../../errors.js';
import { STATUS_WORK } from '../../fs/storages.js';
import { CLOUD_TOOLS, type CloudTool, cloudToolReason } from '../../offline/cloud-tools.js';
import { cleanPath } from '../../util/paths.js';
import { apiRoute } from '../route.js';

const toolShape = z.object({
  name: z.string(),
  available: z.boolean(),
  reason: z.string().describe('why it cannot be used now; empty when it answered'),
});

/**
 * The `set_*` routes of OpenList's cloud offline-download tools (Settings → Other), and the list
 * of every tool with whether it can run. As OpenList: an empty `temp_dir` is saved as it is; a
 * temp folder must lie on a working storage of the tool's own driver, which Atrium never has,
 * so any other value is refused with OpenList's message. The tools are never offered for a path.
 */
export function offlineCloudRoutes(app: FastifyInstance, core: Core): void {
  for (const tool of CLOUD_TOOLS) {
    const extra = Object.fromEntries(Object.keys(tool.extra ?? {}).map((k) => [k, z.string().default('')]));
    apiRoute(app, core, {
      method: 'POST',
      url: `/api/admin/setting/${tool.route}`,
      output: z.literal('ok'),
      auth: 'admin',
      input: z.object({ temp_dir: z.string().default(''), ...extra }),
      handler: async ({ input }) => {
        const values = input as Record<string, string>;
        await checkTempDir(core, tool, values.temp_dir ?? '');
        const items = [{ key: tool.tempDirKey, value: values.temp_dir ?? '' }];
        for (const [field, key] of Object.entries(tool.extra ?? {})) items.push({ key, value: values[field] ?? '' });
        await core.settings.saveMany(items);
        return 'ok' as const;
      },
    });
  }

  apiRoute(app, core, {
    method: 'GET',
    url: '/api/admin/offline_download/tools',
    output: z.array(toolShape),
    auth: 'admin',
    handler: async () => {
      const own = await Promise.all(
        core.offline.toolNames().map(async (name) => {
          try {
            if (name !== 'SimpleHttp') await core.offline.initTool(name);
            return { name, available: true, reason: '' };
          } catch (err) {
            return { name, available: false, reason: (err as Error).message };
          }
        }),
      );
      return [...own, ...CLOUD_TOOLS.map((t) => ({ name: t.name, available: false, reason: cloudToolReason(t) }))];
    },
  });
}

async function checkTempDir(core: Core, tool: CloudTool, tempDir: string): Promise<void> {
  if (tempDir === '') return;
  const dir = cleanPath(tempDir);
  await core.storages.ready(dir);
  const found = core.storages.resolve(dir);
  if (!found) throw new BadRequest('storage does not exists');
  if (found.storage.row.status !== STATUS_WORK) throw new BadRequest(`storage not init: ${found.storage.row.status}`);
  throw new BadRequest(`unsupported storage driver for offline download, only ${tool.name} is supported`);
}
