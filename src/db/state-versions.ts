import { sql } from 'kysely';
import type { DbHandle } from './index.js';

/** The kinds of state every process caches in memory and reloads when another process changed it. */
export const STATE_KINDS = ['metas', 'settings', 'storages', 'auth', 'hooks'] as const;
export type StateKind = (typeof STATE_KINDS)[number];
export type StateVersions = Record<StateKind, number>;

/**
 * One counter per kind of cached state (migration 19). A process that changed a kind bumps it
 * right after its write; every process reads all counters in one small query and reloads a kind
 * whose counter moved (cluster/staleness.ts).
 */
export class StateVersionsRepo {
  constructor(private readonly h: DbHandle) {}

  async all(): Promise<StateVersions> {
    const out = Object.fromEntries(STATE_KINDS.map((k) => [k, 0])) as StateVersions;
    for (const r of await this.h.db.selectFrom('state_versions').select(['kind', 'version']).execute()) {
      if ((STATE_KINDS as readonly string[]).includes(r.kind)) out[r.kind as StateKind] = Number(r.version);
    }
    return out;
  }

  async bump(kind: StateKind): Promise<void> {
    await this.h.db
      .updateTable('state_versions')
      .set({ version: sql<number>`version + 1` })
      .where('kind', '=', kind)
      .execute();
  }
}
