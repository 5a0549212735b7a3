import type { SearchNodesRepo } from '../db/search-nodes.js';
import { BadRequest } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Settings } from '../settings/service.js';
import { readProgress, writeProgress } from './progress.js';
import { depthOf, type TreeSource } from './tree.js';
import { parentOf, walkTree, WalkStopped } from './walker.js';
import { NodeBatch, nodeOf } from './writer.js';

export const MSG_RUNNING = 'index is running';
export const MSG_NOT_RUNNING = 'index is not running';
const STATE_BUILD = 'build';
/** At most one `index_progress` write per this many milliseconds while walking. */
const PROGRESS_EVERY_MS = 1000;

interface BuildState {
  /** The folder whose entries were being written (see walkTree's `resume`). */
  cursor: string;
  objCount: number;
  maxDepth: number;
}

export interface IndexerDeps {
  repo: SearchNodesRepo;
  settings: Settings;
  log: Logger;
  source: () => TreeSource;
  ignored: () => string[];
}

/**
 * Builds and updates the index: one job at a time (a build, an update, or a batch of
 * auto-updates), in the background; progress goes to the `index_progress` setting and a build's
 * cursor to `search_state` in the same transaction as its rows, so a restarted process resumes.
 */
export class Indexer {
  private job: Promise<void> = Promise.resolve();
  private building = false;
  private stopRequested = false;
  private closing = false;

  constructor(private readonly d: IndexerDeps) {}

  get running(): boolean {
    return this.building;
  }

  /** Runs `fn` after every job before it (jobs never overlap). */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.job.then(fn);
    this.job = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** Resolves when the current and queued jobs are done (tests, shutdown). */
  idle(): Promise<void> {
    return this.job;
  }

  private maxDepth(): number {
    const n = this.d.settings.getNumber('max_index_depth', 20);
    return n > 0 ? n : 20;
  }

  private shouldStop = () => this.stopRequested || this.closing;

  private startBuild(): void {
    if (this.building) throw new BadRequest(MSG_RUNNING);
    this.building = true;
    this.stopRequested = false;
  }

  /** `POST /api/admin/index/build`: clears the index and walks the whole tree. */
  build(): Promise<void> {
    this.startBuild();
    return this.exclusive(async () => {
      await this.d.repo.beginBulk();
      await this.d.repo.truncate();
      const state: BuildState = { cursor: '/', objCount: 0, maxDepth: this.maxDepth() };
      await this.d.repo.setState(STATE_BUILD, JSON.stringify(state));
      await this.runBuild(state, undefined);
    });
  }

  /** Continues a build a stopped process left unfinished; false when there is none. */
  async resume(): Promise<boolean> {
    const saved = await this.d.repo.getState(STATE_BUILD);
    if (!saved || this.building) return false;
    let state: BuildState;
    try {
      state = JSON.parse(saved) as BuildState;
    } catch {
      await this.d.repo.setState(STATE_BUILD, undefined);
      return false;
    }
    this.startBuild();
    this.d.log.info({ cursor: state.cursor, objCount: state.objCount }, 'index: resuming an interrupted build');
    void this.exclusive(async () => {
      // The cursor folder's rows may be partly written: drop them and count what stays.
      await this.d.repo.beginBulk();
      await this.d.repo.deleteChildren(state.cursor);
      await this.runBuild({ ...state, objCount: await this.d.repo.count() }, state.cursor);
    }).catch(() => undefined);
    return true;
  }

  private async runBuild(state: BuildState, resume: string | undefined): Promise<void> {
    let lastProgress = 0;
    const batch = new NodeBatch(
      this.d.repo,
      async (tx, written) => {
        await tx.setState(STATE_BUILD, JSON.stringify({ ...state, objCount: state.objCount + written }));
      },
      async (written) => {
        if (Date.now() - lastProgress < PROGRESS_EVERY_MS) return;
        lastProgress = Date.now();
        await this.progress(state.objCount + written, false, '');
      },
    );
    await this.progress(state.objCount, false, '');
    try {
      await walkTree(
        {
          source: this.d.source(),
          batch,
          ignored: this.d.ignored(),
          maxDepth: state.maxDepth,
          log: this.d.log,
          shouldStop: this.shouldStop,
          onFolder: (dir) => {
            state.cursor = dir;
          },
        },
        '/',
        resume,
      );
      await batch.flush();
      await this.d.repo.endBulk();
      await this.d.repo.setState(STATE_BUILD, undefined);
      await this.progress(state.objCount + batch.written, true, '', true);
      this.d.log.info({ objects: state.objCount + batch.written }, 'index: build done');
    } catch (err) {
      if (this.closing) return; // the cursor stays; the next start resumes
      if (!(err instanceof WalkStopped)) this.d.log.error({ err }, 'index: build failed');
      await batch.flush().catch(() => undefined);
      await this.d.repo.endBulk();
      await this.d.repo.setState(STATE_BUILD, undefined);
      await this.progress(state.objCount + batch.written, true, (err as Error).message, true);
    } finally {
      this.building = false;
    }
  }

  /**
   * `POST /api/admin/index/update`: for each path, drops what the index holds there and below,
   * then walks it again `maxDepth` levels deep (the setting's depth when not positive), leaving
   * out `ignore_paths` as well as what the settings ignore.
   */
  update(paths: string[], maxDepth: number, ignorePaths: string[] = []): Promise<void> {
    this.startBuild();
    return this.exclusive(async () => {
      const batch = new NodeBatch(this.d.repo);
      const prev = readProgress(this.d.settings);
      try {
        const ignored = [...this.d.ignored(), ...ignorePaths];
        for (const p of paths) {
          await this.d.repo.deleteTree(p);
          const depth = (maxDepth > 0 ? maxDepth : this.maxDepth()) + depthOf(p);
          const source = this.d.source();
          const obj = p === '/' ? undefined : await source.stat(p);
          if (p !== '/' && !obj) continue;
          if (obj) await batch.add(nodeOf(parentOf(p), obj));
          if (p === '/' || obj?.isDir) {
            await walkTree({ source, batch, ignored, maxDepth: depth, log: this.d.log, shouldStop: this.shouldStop }, p);
          }
        }
        await batch.flush();
        await this.progress(await this.d.repo.count(), true, '', true);
      } catch (err) {
        if (this.closing) return;
        await batch.flush().catch(() => undefined);
        await this.progress(prev.obj_count, true, (err as Error).message, true);
      } finally {
        this.building = false;
      }
    });
  }

  stop(): void {
    if (!this.building) throw new BadRequest(MSG_NOT_RUNNING);
    this.stopRequested = true;
  }

  /** `POST /api/admin/index/clear`: an empty index, progress reset. */
  async clear(): Promise<void> {
    if (this.building) throw new BadRequest(MSG_RUNNING);
    await this.exclusive(async () => {
      await this.d.repo.clear();
      await this.d.repo.setState(STATE_BUILD, undefined);
      await writeProgress(this.d.settings, { obj_count: 0, is_done: true, last_done_time: null, error: '' });
    });
  }

  /** Halts a running job for shutdown, leaving a build's cursor for the next start. */
  async close(): Promise<void> {
    this.closing = true;
    await this.job;
  }

  private async progress(objCount: number, done: boolean, error: string, stamp = false): Promise<void> {
    const prev = readProgress(this.d.settings);
    await writeProgress(this.d.settings, {
      obj_count: objCount,
      is_done: done,
      last_done_time: stamp ? new Date().toISOString() : done ? prev.last_done_time : null,
      error,
    });
  }
}
