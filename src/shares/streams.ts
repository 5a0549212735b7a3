/**
 * Downloads in flight through share links, by share id, so that deleting or disabling a share
 * stops them at once (OpenList #1289: a deleted share kept downloading). In cluster mode the
 * end is announced to the other processes, which stop theirs.
 */
export class ShareStreams {
  private readonly open = new Map<string, Set<() => void>>();
  /** Set by the cluster: tells the other processes that a share's downloads must stop. */
  onEnd?: (id: string) => void;

  /** Registers a download of share `id`; returns the function that forgets it when it finishes. */
  track(id: string, stop: () => void): () => void {
    let set = this.open.get(id);
    if (!set) this.open.set(id, (set = new Set()));
    set.add(stop);
    return () => {
      set.delete(stop);
      if (set.size === 0 && this.open.get(id) === set) this.open.delete(id);
    };
  }

  /** Stops every download of share `id` in this process (and, unless told by a peer, in the others). */
  end(id: string, fromPeer = false): void {
    const set = this.open.get(id);
    this.open.delete(id);
    for (const stop of set ?? []) stop();
    if (!fromPeer) this.onEnd?.(id);
  }

  get size(): number {
    let n = 0;
    for (const s of this.open.values()) n += s.size;
    return n;
  }
}
