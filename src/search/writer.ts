import type { Obj } from '../drivers/types.js';
import type { NewSearchNode, SearchNodesRepo } from '../db/search-nodes.js';

/** Rows buffered before they are written in one transaction (bounded memory while walking). */
export const BATCH_ROWS = 1000;

export function nodeOf(parent: string, obj: Obj): NewSearchNode {
  return { parent, name: obj.name, is_dir: obj.isDir ? 1 : 0, size: obj.isDir ? 0 : obj.size, modified: obj.modified.getTime() || 0 };
}

/**
 * Buffers index rows and writes them in batches of BATCH_ROWS, each batch in one transaction
 * together with whatever `onCommit` records (the build's resume cursor).
 */
export class NodeBatch {
  private rows: NewSearchNode[] = [];
  written = 0;

  constructor(
    private readonly repo: SearchNodesRepo,
    private readonly onCommit?: (tx: SearchNodesRepo, written: number) => Promise<void>,
    private readonly afterCommit?: (written: number) => Promise<void>,
  ) {}

  async add(row: NewSearchNode): Promise<void> {
    this.rows.push(row);
    if (this.rows.length >= BATCH_ROWS) await this.flush();
  }

  async flush(): Promise<void> {
    const rows = this.rows;
    this.rows = [];
    const written = this.written + rows.length;
    if (this.onCommit) {
      await this.repo.transaction(async (tx) => {
        await tx.insertMany(rows);
        await this.onCommit!(tx, written);
      });
    } else if (rows.length > 0) {
      await this.repo.insertMany(rows);
    }
    this.written = written;
    await this.afterCommit?.(written);
  }
}
