import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Core } from '../../core.js';
import { BadRequest } from '../../errors.js';
import { cloudTool, cloudToolReason } from '../../offline/cloud-tools.js';
import { taskJson } from '../../tasks/manager.js';
import { ANY, apiRoute } from '../route.js';
import { taskShape } from '../shapes.js';
import { originOf } from '../../http/origin.js';

const str = (field: string) => z.string({ error: `${field} is required` });
const text = z.union([z.string(), z.number()]).transform(String);

/** Offline downloads (wire-api.md §13): adding them, the tool list, and the tools' settings. */
export function offlineRoutes(app: FastifyInstance, core: Core): void {
  apiRoute(app, core, {
    method: 'POST',
    url: '/api/fs/add_offline_download',
    output: z.object({ tasks: z.array(taskShape) }),
    auth: 'user',
    input: z.object({
      urls: z.array(z.string(), { error: 'urls is required' }),
      path: str('path'),
      tool: str('tool'),
      delete_policy: z.string().default(''),
      password: z.string().default(''),
    }),
    handler: async ({ input, principal, req }) => {
      const user = principal.user;
      const view = core.views.for(user, { front: 'api', origin: originOf(req, 'api'), password: input.password });
      const dstDir = view.virtual(input.path);
      const tasks = await view.offlineDownload(dstDir, input.urls, (creator) => {
        const cloud = cloudTool(input.tool);
        if (cloud) throw new BadRequest(`tool ${cloud.name} is not available: ${cloudToolReason(cloud)}`);
        // OpenList 4.2.6's dialog keeps its default `upload_download_stream` when it switches a
        // magnet or torrent to a torrent tool; OpenList takes it, and such a tool always fetches
        // into a temp folder first, so the temp file goes once it is stored (docs/tasks.md).
        const streamless = input.delete_policy === 'upload_download_stream' && input.tool.toLowerCase() !== 'simplehttp';
        const deletePolicy = streamless ? 'delete_on_upload_succeed' : input.delete_policy;
        return core.offline.add({ urls: input.urls, dstDir, tool: input.tool, deletePolicy, creator });
      });
      return { tasks: tasks.map(taskJson) };
    },
  });

  apiRoute(app, core, {
    method: ANY,
    url: '/api/public/offline_download_tools',
    output: z.array(z.string()),
    auth: 'none',
    handler: () => core.offline.toolNames(),
  });

  /** Saves a tool's settings, then connects to it with them. */
  const configure = async (tool: string, values: Record<string, string>): Promise<string> => {
    await core.settings.saveMany(Object.entries(values).map(([key, value]) => ({ key, value })));
    return core.offline.initTool(tool);
  };

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/admin/setting/set_aria2',
    output: z.string().describe("the tool's version or status"),
    auth: 'admin',
    input: z.object({ uri: str('uri'), secret: z.string().default('') }),
    handler: ({ input }) => configure('aria2', { aria2_uri: input.uri, aria2_secret: input.secret }),
  });
  apiRoute(app, core, {
    method: 'POST',
    url: '/api/admin/setting/set_qbit',
    output: z.string(),
    auth: 'admin',
    input: z.object({ url: str('url'), seedtime: text.default('0') }),
    handler: async ({ input }) => {
      await configure('qBittorrent', { qbittorrent_url: input.url, qbittorrent_seedtime: input.seedtime });
      return 'ok';
    },
  });
  apiRoute(app, core, {
    method: 'POST',
    url: '/api/admin/setting/set_transmission',
    output: z.string(),
    auth: 'admin',
    input: z.object({ uri: str('uri'), seedtime: text.default('0') }),
    handler: async ({ input }) => {
      await configure('Transmission', { transmission_uri: input.uri, transmission_seedtime: input.seedtime });
      return 'ok';
    },
  });
}
