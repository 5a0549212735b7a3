import {
  type CompiledQuery,
  type Dialect,
  IdentifierNode,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryCompiler,
  type QueryId,
  type QueryResult,
  type RootOperationNode,
  type TableNode,
  type UnknownRow,
} from 'kysely';

/** Marks a query whose tables get the prefix (the plugin saw it). */
const PREFIXED = Symbol('table prefix');

/**
 * Adds the configured `table_prefix` (default `x_`, as the original) to every table name,
 * so queries are written with bare names and several installations can share one database.
 * The plugin only marks each query it sees (queries run without plugins, as Kysely's
 * introspectors' on the system catalogs, stay bare); the dialect's compiler (withTablePrefix)
 * writes the marked queries' tables with the prefix. Rewriting the query tree in the plugin
 * instead copied every node of every statement, a cost paid ~17 times per chunk of an upload.
 */
export class TablePrefixPlugin implements KyselyPlugin {
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return Object.freeze({ ...args.node, [PREFIXED]: true });
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

/** The dialect with a compiler writing `prefix` before the tables of queries TablePrefixPlugin marked. */
export function withTablePrefix(dialect: Dialect, prefix: string): Dialect {
  type Compiler = QueryCompiler & { visitTable(node: TableNode): void };
  // A subclass, not a patched instance: the compiler binds its visitors when it is built.
  const Base = Object.getPrototypeOf(dialect.createQueryCompiler()).constructor as new () => Compiler;
  class Prefixed extends Base {
    #on = false;
    override compileQuery(node: RootOperationNode, queryId: QueryId): CompiledQuery {
      this.#on = PREFIXED in node;
      try {
        return super.compileQuery(node, queryId);
      } finally {
        this.#on = false;
      }
    }
    override visitTable(node: TableNode): void {
      super.visitTable(this.#on ? { ...node, table: { ...node.table, identifier: IdentifierNode.create(prefix + node.table.identifier.name) } } : node);
    }
  }
  return {
    createDriver: () => dialect.createDriver(),
    createAdapter: () => dialect.createAdapter(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createQueryCompiler: () => new Prefixed(),
  };
}
