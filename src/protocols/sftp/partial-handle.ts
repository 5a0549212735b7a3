import type { PartialWrite } from '../../uploads/partials.js';
import type { View } from '../../view/view.js';

/**
 * An open file being written into its user's partial (uploads/partials.ts): every WRITE lands at
 * its offset in the staging file (SSH_FXF_APPEND: at its end), so writes in any order, gaps and
 * rewrites are served; CLOSE commits the file atomically under its name, decided once more on the
 * view as it is then; a connection that drops first leaves the bytes as a partial, which the same
 * user's `stat` shows and an open without TRUNC continues (OpenSSH `reput`, `put -a`).
 */
export class PartialUploadHandle {
  /** A modification time the client set while writing, applied when the file is committed. */
  modified?: Date;
  /** Writes one after another (overlapping writes land in request order). */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly path: string,
    private readonly partial: PartialWrite,
    private readonly opts: {
      append: boolean;
      /** The view the file is committed through, decided again when all its bytes are in; throws to refuse. */
      beforeEnd(): Promise<View>;
      /** How long a write of `n` bytes waits before it is answered (the account's upload rate). */
      pace?: (n: number) => number;
      /** Called once when the handle is closed or dropped (the transfer it held, view/meters.ts). */
      done?: () => void;
    },
  ) {}

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** The file's size so far (after the writes received before this call). */
  size(): Promise<number> {
    return this.serial(async () => this.partial.size);
  }

  write(offset: number, data: Buffer): Promise<void> {
    return this.serial(async () => {
      const wait = this.opts.pace?.(data.length) ?? 0;
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      await this.partial.write(this.opts.append ? this.partial.size : offset, data);
    });
  }

  /** SETSTAT of the size: cuts or extends the file. */
  truncate(size: number): Promise<void> {
    return this.serial(() => this.partial.truncate(size));
  }

  /** Commits the file under its name; refused, its bytes are dropped; failed otherwise, they stay a partial. */
  async close(): Promise<void> {
    try {
      await this.queue;
      let view: View;
      try {
        view = await this.opts.beforeEnd();
      } catch (err) {
        await this.partial.drop();
        throw err;
      }
      await this.partial.commit(view, this.path, this.modified);
    } finally {
      this.opts.done?.();
    }
  }

  /** The connection dropped before CLOSE: the bytes written stay, for the same user to resume. */
  abort(): void {
    this.opts.done?.();
    void this.queue.then(() => this.partial.keep()).catch(() => undefined);
  }
}
