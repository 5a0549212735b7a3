// What drivers showing other mounted paths share (Alias, Strm, Chunk, Crypt): the virtual file
// system they read and write through; and for those over one remote_path (Chunk, Crypt), the
// check that it lies outside the storage, and moves, copies and removals of the remote object a
// path stands for.

import path from 'node:path';
import { cleanPath, isSubPath } from '../util/paths.js';
import type { DriverContext, VirtualFs } from './types.js';

export abstract class OverlayDriver {
  constructor(
    protected readonly opts: Record<string, unknown>,
    protected readonly ctx: DriverContext,
    /** The driver's name in messages ("alias", "crypt"). */
    protected readonly kind: string,
  ) {}

  protected get vfs(): VirtualFs {
    if (!this.ctx.vfs) throw new Error(`${this.kind} storages need the virtual file system`);
    return this.ctx.vfs;
  }

  async drop(): Promise<void> {}

  addition(): Record<string, unknown> {
    return this.opts;
  }
}

/** An overlay of one mounted path, remote_path: each path of the storage stands for one object below it. */
export abstract class RemotePathOverlay extends OverlayDriver {
  protected readonly remoteRoot: string;

  constructor(opts: Record<string, unknown>, ctx: DriverContext, kind: string) {
    super(opts, ctx, kind);
    this.remoteRoot = cleanPath(String(opts.remote_path));
  }

  /** The remote folder of the storage's folder `p`. */
  protected abstract remoteDir(p: string): string;

  /** The remote object a rename, move, copy or remove of `p` acts on. */
  protected abstract remoteOf(p: string): Promise<{ remote: string }>;

  /** Refuses a remote_path inside the storage or holding it: the storage would show itself. */
  protected checkRemoteRoot(): void {
    const own = cleanPath(this.ctx.mountPath);
    if (isSubPath(own, this.remoteRoot) || isSubPath(this.remoteRoot, own)) {
      throw new Error(`remote_path ${this.remoteRoot} must lie outside the ${this.kind} storage ${own} and not contain it`);
    }
  }

  /** The remote object of `src` and where a move or copy into `dstDir` puts it (the same remote name). */
  private async relocation(src: string, dstDir: string): Promise<[from: string, to: string]> {
    const { remote } = await this.remoteOf(src);
    return [remote, path.posix.join(this.remoteDir(dstDir), path.posix.basename(remote))];
  }

  async move(src: string, dstDir: string): Promise<void> {
    await this.vfs.moveTo(...(await this.relocation(src, dstDir)));
  }

  async copy(src: string, dstDir: string): Promise<void> {
    await this.vfs.copyTo(...(await this.relocation(src, dstDir)));
  }

  async remove(p: string): Promise<void> {
    await this.vfs.remove((await this.remoteOf(p)).remote);
  }
}
