// The task kinds, listed once. The task manager, the task routes, the metrics, the config's
// `tasks.<section>` (and its environment variables), the thread settings, the bits a kind needs
// of its creator and the web UI's task pages all derive from this table. It imports nothing, so
// that config/ (below tasks/) and the web UI's types may read it too.

/** Each task kind (its route name: `/api/task/<kind>/…`) → the config section holding its workers, retries and persistence. */
export const TASK_KINDS = {
  upload: 'upload',
  copy: 'copy',
  move: 'move',
  offline_download: 'download',
  offline_download_transfer: 'transfer',
  decompress: 'decompress',
  decompress_upload: 'decompress_upload',
  sync: 'sync',
} as const;

export type TaskKind = keyof typeof TASK_KINDS;
/** A config section of a task kind (`tasks.<section>`). */
export type TaskSection = (typeof TASK_KINDS)[TaskKind];

/** The task kinds, in the table's order. */
export const TASK_KIND_NAMES = Object.keys(TASK_KINDS) as TaskKind[];
/** The config sections of the task kinds, in the table's order. */
export const TASK_SECTIONS = Object.values(TASK_KINDS) as TaskSection[];
