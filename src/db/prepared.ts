import { type Compilable, type CompiledQuery, createQueryId, type Kysely, type QueryResult } from 'kysely';

const NAME = Symbol('prepared parameter');

/** Stands in a query for the argument `name`; replaced by its value at each run. */
interface Slot {
  readonly [NAME]: string;
}

const isSlot = (v: unknown): v is Slot => typeof v === 'object' && v !== null && NAME in v;

/** A query built and compiled once, run with new arguments (`run(db or transaction, args)`). */
export type Prepared<DB, A, R> = (db: Kysely<DB>, args: A) => Promise<QueryResult<R>>;

/**
 * Builds and compiles a query once, for queries run once or more per request on a hot path (a
 * chunk of an upload runs about ten): Kysely otherwise builds the query's tree, freezes it and
 * compiles it to SQL at every run, which on the 2-core VM costs a chunk more than the database
 * does. `build` gets `args`, whose every property stands for that argument (typed as the argument,
 * so the builder checks it); the compiled SQL keeps a slot in its parameters where each was
 * used, filled at each run. The SQL depends only on the dialect and the plugins, so it is
 * compiled against `db` and may run on it or on any of its transactions. A query whose shape
 * depends on its arguments (an `in` list of any length, a condition added or not) can not be
 * prepared: build it as usual.
 */
export function prepare<DB, A extends Record<string, unknown>, R>(db: Kysely<DB>, build: (db: Kysely<DB>, args: A) => Compilable<R>): Prepared<DB, A, R> {
  const args = new Proxy({} as A, { get: (_t, name) => ({ [NAME]: String(name) }) satisfies Slot });
  const compiled = build(db, args).compile();
  const slots = compiled.parameters.map((p) => (isSlot(p) ? p[NAME] : undefined));
  return (target, values) => {
    const parameters = compiled.parameters.map((p, i) => {
      const name = slots[i];
      if (name === undefined) return p;
      if (!(name in values)) throw new Error(`prepared query: no value for ${name}`);
      return values[name];
    });
    const query: CompiledQuery<R> = { query: compiled.query, queryId: createQueryId(), sql: compiled.sql, parameters };
    return target.executeQuery(query);
  };
}
