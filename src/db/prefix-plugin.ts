import {
  IdentifierNode,
  type KyselyPlugin,
  OperationNodeTransformer,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  type TableNode,
  type UnknownRow,
} from 'kysely';

class PrefixTransformer extends OperationNodeTransformer {
  constructor(private readonly prefix: string) {
    super();
  }

  protected override transformTable(node: TableNode): TableNode {
    const t = super.transformTable(node);
    return {
      ...t,
      table: { ...t.table, identifier: IdentifierNode.create(this.prefix + t.table.identifier.name) },
    };
  }
}

/**
 * Adds the configured `table_prefix` (default `x_`, as the original) to every table name,
 * so queries are written with bare names and several installations can share one database.
 */
export class TablePrefixPlugin implements KyselyPlugin {
  private readonly transformer: PrefixTransformer;
  constructor(prefix: string) {
    this.transformer = new PrefixTransformer(prefix);
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return this.transformer.transformNode(args.node);
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}
