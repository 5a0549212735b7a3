import type { ViewDeps } from './deps.js';
import type { Link, LinkArgs, Obj } from '../drivers/types.js';
import type { Mounted } from '../fs/storages.js';
import type { EventOrigin } from '../audit/events.js';
import { underRoot } from './paths.js';
import { countBytes, Recorder, type TransferDone } from '../audit/record.js';
import { signRule } from './rules.js';

/**
 * The principal of raw links `/d` and `/p`: whoever holds the path's sign. There is no user:
 * the path is the full virtual path (cleaned and bounded as on every front), and a sign is
 * required when `sign_all` is on, the storage has enable_sign, or a hide or password rule
 * protects the entry (wire-api.md §8).
 */
export class RawView {
  constructor(private readonly core: ViewDeps) {}

  /** The virtual path a raw link names. */
  virtual(rawPath: string): string {
    return underRoot('/', rawPath, 'navigate');
  }

  storageOf(p: string): Mounted {
    return this.core.fs.resolveStorage(p).storage;
  }

  /** Refuses a path whose link needs a sign unless `sign` is this path's (`storage`: its owner, if any). */
  requireSign(p: string, storage: Mounted | undefined, sign: string): void {
    const dir = p === '/' ? '/' : p.slice(0, p.lastIndexOf('/')) || '/';
    const name = p.slice(p.lastIndexOf('/') + 1);
    if (this.core.settings.getBool('sign_all') || storage?.row.enable_sign || signRule(this.core.metas, dir)(name)) {
      this.core.signer.verify(p, sign);
    }
  }

  /**
   * One entry of the archive at `p` (raw links /ad /ap /ae; the sign was checked on `p`): its
   * stream emits the `download` event (user '', the entry's path as `dst_path`) when it ends.
   */
  async archiveEntry(p: string, inner: string, password: string, origin: EventOrigin, signal?: AbortSignal) {
    const sent = this.recorder(origin).transfer(p, inner);
    try {
      const found = await this.core.archives.entry(p, inner, password, signal);
      return { ...found, stream: countBytes(found.stream, sent) };
    } catch (err) {
      sent(0, err);
      throw err;
    }
  }

  link(p: string, args: LinkArgs): Promise<{ link: Link; obj: Obj; storage: Mounted }> {
    return this.core.fs.link(p, args);
  }

  /** The thumbnail of the file at `p` (`/d?type=thumb`; the sign was checked on `p`), at the size asked. */
  thumb(p: string, size?: string): Promise<{ link: Link; obj: Obj; storage: Mounted }> {
    return this.core.thumbs.get(p, size);
  }

  /** A transfer of `p` begins (a raw link's download): the front calls it once with the bytes sent. */
  transfer(p: string, origin: EventOrigin): TransferDone {
    return this.recorder(origin).transfer(p);
  }

  /** Raw links have no user: their events name nobody ('') and carry the caller's address. */
  private recorder(origin: EventOrigin): Recorder {
    return new Recorder(this.core.events, '', origin);
  }
}
