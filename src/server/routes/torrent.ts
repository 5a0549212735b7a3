import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Core } from '../../core.js';
import { BadRequest } from '../../errors.js';
import { decodeTorrentData, MAX_TORRENT_BASE64, parseMagnet, parseTorrent } from '../../offline/torrent-info.js';
import { apiRoute } from '../route.js';
import { originOf } from '../../http/origin.js';

/** The JSON around the base64 torrent: a little over OpenList's 14 MiB of base64. */
const BODY_LIMIT = MAX_TORRENT_BASE64 + 64 * 1024;

const torrentInfoShape = z.object({
  name: z.string(),
  total_size: z.number(),
  piece_length: z.number(),
  piece_count: z.number(),
  info_hash: z.string().describe('hex SHA-1 of the bencoded info dictionary'),
  files: z.array(z.object({ path: z.string(), size: z.number() })),
  has_cas: z.boolean(),
  cas: z.object({ file_md5: z.string(), slice_md5: z.string(), slice_size: z.number(), cloud: z.string() }).optional(),
});

/**
 * The BT tab of OpenList's offline-download dialog (docs/tasks.md): `parse` reads a `.torrent`
 * (base64 in `torrent_data`) or, Atrium's addition, a `magnet` link, and lists its files; the
 * front end then hands the torrent to a torrent tool through `/api/fs/add_offline_download` as a
 * magnet. `rapid_upload` is OpenList's CAS "rapid upload" into a 189 Cloud PC storage: Atrium
 * has no such driver, so after OpenList's checks it says so (400), and the front end falls back
 * to the download.
 */
export function torrentRoutes(app: FastifyInstance, core: Core): void {
  apiRoute(app, core, {
    method: 'POST',
    url: '/api/fs/torrent/parse',
    // A torrent over the size limit: 413.
    codes: [['TooLarge', 413]],
    output: torrentInfoShape,
    auth: 'user',
    bodyLimit: BODY_LIMIT,
    input: z.object({
      torrent_data: z.string().default('').describe('the .torrent file, base64'),
      magnet: z.string().default('').describe("Atrium's addition: a magnet link instead of a file"),
    }),
    handler: ({ input }) => {
      if (input.torrent_data) return parseTorrent(decodeTorrentData(input.torrent_data));
      if (input.magnet) return parseMagnet(input.magnet);
      throw new BadRequest('torrent_data is required');
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/fs/torrent/rapid_upload',
    // A torrent over the size limit: 413.
    codes: [['TooLarge', 413]],
    output: z.object({ message: z.string(), file_name: z.string(), file_size: z.number() }),
    auth: 'user',
    bodyLimit: BODY_LIMIT,
    input: z.object({
      torrent_data: z.string({ error: 'torrent_data is required' }).min(1, 'torrent_data is required'),
      path: z.string({ error: 'path is required' }).min(1, 'path is required'),
    }),
    handler: async ({ input, principal, req }) => {
      const view = core.views.for(principal.user, { front: 'api', origin: originOf(req, 'api') });
      const dir = view.virtual(input.path);
      view.requireCreate(`${dir === '/' ? '' : dir}/.torrent-rapid-upload`);
      const info = parseTorrent(decodeTorrentData(input.torrent_data, 'too-large'));
      if (!info.has_cas) throw new BadRequest('the torrent has no CAS extension (x-cas): it cannot be rapid-uploaded');
      const target = await view.find(dir);
      if (!target) throw new BadRequest(`failed to get the target folder: ${input.path} not found`);
      if (!target.isDir) throw new BadRequest('not a folder');
      throw new BadRequest('the target storage is not a 189 Cloud PC storage: CAS rapid upload is not supported (Atrium has no 189CloudPC driver)');
    },
  });
}
