import { can, PERM } from '../auth/permissions.js';
import { Forbidden } from '../errors.js';
import type { CreatorAccess, CreatorRules, TaskCreator } from '../tasks/creator.js';
import type { TaskKind } from '../tasks/kinds.js';
import { isSubPath } from '../util/paths.js';
import type { LiveView } from './live.js';
import { MSG_DENIED, type View, type Views } from './view.js';

/** The bit each task kind needs of its creator, for as long as it runs (an upload needs only what each name needs). */
export const TASK_BITS: Record<TaskKind, number> = {
  upload: 0,
  copy: PERM.COPY,
  move: PERM.MOVE,
  offline_download: PERM.OFFLINE_DOWNLOAD,
  offline_download_transfer: PERM.OFFLINE_DOWNLOAD,
  decompress: PERM.DECOMPRESS,
  decompress_upload: PERM.DECOMPRESS,
  // Sync jobs are an admin's (their routes are admin-only); the run decides each name on the owner's view.
  sync: 0,
};

/** How long a task's live view is kept without being asked for (a task asks at each name). */
const IDLE_MS = 10 * 60_000;

/**
 * Tasks carry their creator: each task decides every name it writes on its creator's live view
 * (`Views.live`), as the account and the rules are at that moment, exactly as a direct upload of
 * that name through the API would be decided. One live view per task, re-read at each ask (the
 * user comes from the auth cache).
 */
export class TaskAccess implements CreatorAccess {
  private readonly lives = new Map<string, { live: LiveView<View>; at: number }>();

  constructor(private readonly views: () => Views) {}

  async rules(task: { id: string; kind: string; creator: TaskCreator }): Promise<CreatorRules> {
    const view = await this.liveOf(task).now();
    const bit = TASK_BITS[task.kind as TaskKind] ?? 0;
    if (bit && !can(view.user, bit)) throw new Forbidden(MSG_DENIED);
    return new CreatorView(view);
  }

  private liveOf(task: { id: string; creator: TaskCreator }): LiveView<View> {
    const now = Date.now();
    for (const [id, held] of this.lives) if (now - held.at > IDLE_MS) this.lives.delete(id);
    let held = this.lives.get(task.id);
    if (!held) {
      const opts = { front: 'api' as const, password: task.creator.passwords ?? [], origin: { front: 'task' as const, requestId: `task:${task.id}` } };
      held = { live: this.views().live({ id: task.creator.id, pwdTs: 0 }, opts), at: now };
      this.lives.set(task.id, held);
    }
    held.at = now;
    return held.live;
  }
}

/** A creator's view as a task asks it: every path must still lie below the creator's base path as it is now. */
class CreatorView implements CreatorRules {
  constructor(private readonly view: View) {}

  private inside(p: string): void {
    if (!isSubPath(this.view.root, p)) throw new Forbidden(MSG_DENIED);
  }

  checkPut(p: string): void {
    this.inside(p);
    this.view.checkPut(p);
  }

  checkMkdir(p: string): void {
    this.inside(p);
    this.view.requireCreate(p);
  }

  checkRead(p: string): void {
    this.inside(p);
    this.view.requireRead(p);
  }
}
