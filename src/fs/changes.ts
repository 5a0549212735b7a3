/** A change the FsWriter made: the entries of `path` changed (with `recursive`, anything below it). */
export interface FsChange {
  path: string;
  recursive: boolean;
}

export type FsChangeListener = (change: FsChange) => void;

/**
 * Tells interested services (the search index) what a write through Atrium changed, after the
 * change is made. Listeners must not throw and must not block: they queue their own work.
 */
export class FsChanges {
  private readonly listeners: FsChangeListener[] = [];

  on(listener: FsChangeListener): () => void {
    this.listeners.push(listener);
    return () => {
      const i = this.listeners.indexOf(listener);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }

  emit(path: string, recursive: boolean): void {
    for (const l of this.listeners) l({ path, recursive });
  }
}
