// The manage page's backup and restore over HTTP: the same file and the same import as
// `atrium export` / `atrium import` (installation.ts, cli/backup.ts), admins only.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Core } from '../core.js';
import type { Principal } from '../auth/accounts.js';
import { adminChange } from '../server/admin-change.js';
import { authenticate, apiRoute } from '../server/route.js';
import { importReportShape } from '../server/backup-report.js';
import type { ImportReport } from './installation.js';

/** The export and import code loads at the first backup or restore (a default start does without it). */
const installation = () => import('./installation.js');

/** The largest backup file the import takes (an installation's configuration is far smaller). */
export const BACKUP_BODY_LIMIT = 16 * 1024 * 1024;

/** The import's report in the wire's names. */
export function reportJson(r: ImportReport): z.infer<typeof importReportShape> {
  return {
    settings: r.settings,
    users: r.users,
    groups: r.groups,
    storages: r.storages,
    metas: r.metas,
    ssh_keys: r.sshKeys,
    shares: r.shares,
    passkeys: r.passkeys,
    unknown_settings: r.unknownSettings,
  };
}

/** `GET /api/admin/backup/export` (a JSON file) and `POST /api/admin/backup/import` (that file as the body). */
export function backupRoutes(app: FastifyInstance, core: Core): void {
  app.route({
    method: 'GET',
    url: '/api/admin/backup/export',
    config: {
      doc: {
        auth: 'admin',
        summary: 'the installation as the file `atrium export` writes (it holds password hashes and storage secrets)',
        rawResponse: { description: 'the backup file (JSON, not wrapped in the envelope) as an attachment; an error envelope when refused' },
      },
    },
    handler: async (req, reply) => {
      const principal = (await authenticate(core, req, 'admin')) as Principal;
      const name = `atrium-backup-${new Date().toISOString().slice(0, 10)}.json`;
      const backup = await adminChange(core, { principal, req }, 'backup_export', name, async () => (await installation()).exportInstallation(core));
      return reply
        .type('application/json; charset=utf-8')
        .header('content-disposition', `attachment; filename="${name}"`)
        .header('cache-control', 'no-store')
        .send(`${JSON.stringify(backup, null, 2)}\n`);
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/admin/backup/import',
    auth: 'admin',
    bodyLimit: BACKUP_BODY_LIMIT,
    output: importReportShape,
    // the body is the file; the query may name it (for the audit log)
    input: z.object({ name: z.string().max(255).default('') }),
    from: 'query',
    handler: (ctx) =>
      adminChange(core, ctx, 'backup_import', ctx.input.name, async () => {
        const report = await (await installation()).importInstallation(core, ctx.req.body ?? {});
        // The import wrote the storages' and the path rules' rows: mount and load them as they now
        // are, here and on the other processes (settings, users and groups announce their own writes).
        const { ids, mounted } = await core.storages.reconcile();
        await mounted;
        for (const id of ids) core.storages.onAdminChange(id);
        await core.metas.changed();
        return reportJson(report);
      }),
  });
}
