import { z } from 'zod';

const counts = z.object({ added: z.number().int(), updated: z.number().int() });

/**
 * What `POST /api/admin/backup/import` answers: per section, the entries added, updated and
 * skipped (the report `atrium import` prints, src/backup/installation.ts), in the wire's names.
 */
export const importReportShape = z.object({
  settings: z.number().int().describe('settings whose value changed'),
  users: counts.extend({ skipped: z.array(z.string()).describe('users not restored: no password hash in the file') }),
  groups: counts,
  storages: counts,
  metas: counts,
  ssh_keys: z.object({ added: z.number().int(), skipped: z.number().int() }),
  shares: counts.extend({ skipped: z.number().int() }),
  passkeys: z.object({ added: z.number().int(), skipped: z.number().int() }),
  unknown_settings: z.array(z.string()).describe('settings this version does not know, left out'),
});
