import type { Settings } from '../settings/service.js';

/** The `index_progress` setting (wire-api.md §11.3): what the admin's progress route answers. */
export interface IndexProgress {
  obj_count: number;
  is_done: boolean;
  last_done_time: string | null;
  error: string;
}

export const KEY_PROGRESS = 'index_progress';

export function readProgress(settings: Settings): IndexProgress {
  let v: Partial<IndexProgress> = {};
  try {
    const parsed = JSON.parse(settings.get(KEY_PROGRESS) || '{}');
    if (parsed && typeof parsed === 'object') v = parsed;
  } catch {
    // A hand-edited value that is not JSON reads as "never built".
  }
  return {
    obj_count: Number(v.obj_count ?? 0),
    is_done: v.is_done ?? false,
    last_done_time: v.last_done_time ?? null,
    error: v.error ?? '',
  };
}

export async function writeProgress(settings: Settings, p: IndexProgress): Promise<void> {
  await settings.set(KEY_PROGRESS, JSON.stringify(p));
}
