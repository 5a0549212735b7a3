import { type Expression, type ExpressionBuilder, type QueryCreator, type Selectable, type SqlBool, sql } from 'kysely';
import { createSearchIndexes, dropSearchIndexes, rebuildFts } from './search-ddl.js';
import type { DbHandle } from './index.js';
import type { Database, SearchNodesTable } from './schema.js';

export type SearchNodeRow = Selectable<SearchNodesTable>;
export type NewSearchNode = Omit<SearchNodeRow, 'id'>;

/** What a search asks of the index: names containing every keyword, below a folder. */
export interface NodeQuery {
  keywords: string[];
  /** Absolute virtual folder; `/` is everything. */
  under: string;
  /** More folders whose entries match too (a principal's named roots, searched from the top of their tree). */
  alsoUnder?: string[];
  /** 0 all, 1 folders only, 2 files only. */
  scope: number;
}

/** Rows per INSERT statement (6 parameters each stays under every engine's limit). */
const INSERT_CHUNK = 1000;
/** A trigram index can answer keywords of at least three characters. */
const TRIGRAM = 3;

type Eb = ExpressionBuilder<Database, 'search_nodes'>;

/** `%kw%` for LIKE with `!` escaping the wildcards (the same ESCAPE on every engine). */
export function likePattern(keyword: string): string {
  return `%${keyword.replace(/[!%_]/g, (c) => `!${c}`)}%`;
}

/** The bounds of a subtree: paths strictly below `dir` sort in [`dir/`, `dir0`) byte-wise. */
function below(dir: string): [string, string] {
  const base = dir === '/' ? '' : dir;
  return [`${base}/`, `${base}0`];
}

/**
 * The `search_nodes` table: the objects of the virtual tree (absolute parent path, name,
 * folder flag, size, modification time) and the substring search over their names.
 */
export class SearchNodesRepo {
  constructor(private readonly h: DbHandle) {}

  async insertMany(nodes: NewSearchNode[]): Promise<void> {
    for (let i = 0; i < nodes.length; i += INSERT_CHUNK) {
      await this.h.db.insertInto('search_nodes').values(nodes.slice(i, i + INSERT_CHUNK)).execute();
    }
  }

  /** Runs `fn` in one transaction (a batch of rows and the build cursor commit together). */
  transaction<T>(fn: (repo: SearchNodesRepo) => Promise<T>): Promise<T> {
    return this.h.db.transaction().execute((trx) => fn(new SearchNodesRepo({ ...this.h, db: trx, readDb: () => trx })));
  }

  async children(parent: string): Promise<SearchNodeRow[]> {
    return this.h.db.selectFrom('search_nodes').selectAll().where('parent', '=', parent).execute();
  }

  async find(parent: string, name: string): Promise<SearchNodeRow | undefined> {
    return this.h.db.selectFrom('search_nodes').selectAll().where('parent', '=', parent).where('name', '=', name).executeTakeFirst();
  }

  async update(id: number, set: Partial<NewSearchNode>): Promise<void> {
    await this.h.db.updateTable('search_nodes').set(set).where('id', '=', id).execute();
  }

  /** Deletes the rows of one folder's entries (not their subtrees). */
  async deleteChildren(parent: string): Promise<void> {
    await this.h.db.deleteFrom('search_nodes').where('parent', '=', parent).execute();
  }

  /** Deletes an object and everything indexed below it (`/`: the whole index). */
  async deleteTree(virtualPath: string): Promise<void> {
    if (virtualPath === '/') return this.clear();
    const cut = virtualPath.lastIndexOf('/');
    const parent = cut === 0 ? '/' : virtualPath.slice(0, cut);
    const [lo, hi] = below(virtualPath);
    await this.h.db
      .deleteFrom('search_nodes')
      .where((eb) =>
        eb.or([
          eb.and([eb('parent', '=', parent), eb('name', '=', virtualPath.slice(cut + 1))]),
          eb('parent', '=', virtualPath),
          eb.and([eb('parent', '>=', lo), eb('parent', '<', hi)]),
        ]),
      )
      .execute();
  }

  /**
   * Bulk mode of a full build: the secondary indexes (and SQLite's FTS triggers) are dropped while
   * rows stream in, and made again in one pass by endBulk. Idempotent, so a resumed build can call it.
   */
  async beginBulk(): Promise<void> {
    await dropSearchIndexes(this.h.db, this.h.type, this.h.prefix);
  }

  async endBulk(): Promise<void> {
    if (this.h.type === 'mysql') return;
    if (this.h.type === 'sqlite3') await rebuildFts(this.h.db, this.h.prefix);
    await createSearchIndexes(this.h.db, this.h.type, this.h.prefix);
    // Fresh statistics, or PostgreSQL walks the name B-tree in order instead of using the GIN index.
    if (this.h.type === 'postgres') await sql`analyze ${sql.table('search_nodes')}`.execute(this.h.db);
  }

  /** Empties the index; in bulk mode (no triggers) without touching rows one by one. */
  async truncate(): Promise<void> {
    if (this.h.type === 'postgres') await sql`truncate table ${sql.table('search_nodes')}`.execute(this.h.db);
    else await this.h.db.deleteFrom('search_nodes').execute();
    if (this.h.type === 'sqlite3') await sql`insert into ${sql.table('search_fts')}(${sql.table('search_fts')}) values ('delete-all')`.execute(this.h.db);
  }

  async clear(): Promise<void> {
    await this.beginBulk();
    await this.truncate();
    await this.endBulk();
  }

  async count(): Promise<number> {
    const r = await this.h.db.selectFrom('search_nodes').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(r.n);
  }

  private matches(eb: Eb, q: NodeQuery): Expression<SqlBool> {
    const conds: Expression<SqlBool>[] = [];
    const trigram: string[] = [];
    for (const kw of q.keywords) {
      const pattern = likePattern(kw);
      if (this.h.type === 'sqlite3' && [...kw].length >= TRIGRAM && pattern === `%${kw}%`) trigram.push(pattern);
      else if (this.h.type === 'postgres') conds.push(sql<SqlBool>`name ilike ${pattern} escape '!'`);
      else if (this.h.type === 'mysql') conds.push(sql<SqlBool>`lower(name) like ${pattern.toLowerCase()} escape '!'`);
      else conds.push(sql<SqlBool>`name like ${pattern} escape '!'`);
    }
    if (trigram.length > 0) {
      const likes = sql.join(
        trigram.map((p) => sql`name like ${p}`),
        sql` and `,
      );
      conds.push(eb('id', 'in', sql<number>`(select rowid from ${sql.table('search_fts')} where ${likes})`));
    }
    const unders = [q.under, ...(q.alsoUnder ?? [])];
    if (!unders.includes('/')) {
      conds.push(eb.or(unders.flatMap((u) => {
        const [lo, hi] = below(u);
        return [eb('parent', '=', u), eb.and([eb('parent', '>=', lo), eb('parent', '<', hi)])];
      })));
    }
    if (q.scope === 1) conds.push(eb('is_dir', '=', 1));
    if (q.scope === 2) conds.push(eb('is_dir', '=', 0));
    return eb.and(conds);
  }

  /** Counts the matches, on the read connection (off the event loop on SQLite: DbHandle.readDb). */
  async countMatches(q: NodeQuery): Promise<number> {
    const r = await this.h
      .readDb()
      .selectFrom('search_nodes')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where((eb) => this.matches(eb, q))
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  /**
   * Matches ordered by name (then id), `limit` rows after the keyset `after` (exclusive) or
   * from `offset`. The keyset form lets a caller stream every match in bounded memory. Run on
   * the read connection (DbHandle.readDb).
   */
  async matchPage(q: NodeQuery, limit: number, from: { offset?: number; after?: { name: string; id: number } }): Promise<SearchNodeRow[]> {
    const after = from.after;
    const select = (qc: QueryCreator<Database>) => {
      let query = qc
        .selectFrom('search_nodes')
        .selectAll()
        .where((eb) => this.matches(eb, q));
      if (after) query = query.where((eb) => eb.or([eb('name', '>', after.name), eb.and([eb('name', '=', after.name), eb('id', '>', after.id)])]));
      return query;
    };
    // PostgreSQL: matches first (GIN), then the order. Left alone, the planner may walk the whole
    // name B-tree in order, filtering, which takes seconds for a keyword with few matches.
    const db = this.h.readDb();
    const ordered =
      this.h.type === 'postgres'
        ? db
            .with((w) => w('search_matches').materialized(), select)
            .selectFrom('search_matches' as 'search_nodes')
            .selectAll()
        : select(db);
    return ordered
      .orderBy('name')
      .orderBy('id')
      .limit(limit)
      .offset(from.offset ?? 0)
      .execute();
  }

  // The build's resume cursor lives in `search_state`.

  async getState(key: string): Promise<string | undefined> {
    const r = await this.h.db.selectFrom('search_state').select('value').where('key', '=', key).executeTakeFirst();
    return r?.value;
  }

  async setState(key: string, value: string | undefined): Promise<void> {
    await this.h.db.deleteFrom('search_state').where('key', '=', key).execute();
    if (value !== undefined) await this.h.db.insertInto('search_state').values({ key, value }).execute();
  }
}
