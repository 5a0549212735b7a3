import type { Obj } from '../api';
import { extOf } from '../format';
import type { IconName } from './Icon';

/** Type codes of the wire API (wire-api.md §6.2). */
export const TYPE = { UNKNOWN: 0, FOLDER: 1, VIDEO: 2, AUDIO: 3, TEXT: 4, IMAGE: 5 } as const;

export function iconOf(o: Pick<Obj, 'is_dir' | 'type' | 'name'>): IconName {
  if (o.is_dir) return 'folder';
  if (extOf(o.name) === 'pdf') return 'pdf';
  switch (o.type) {
    case TYPE.VIDEO:
      return 'video';
    case TYPE.AUDIO:
      return 'audio';
    case TYPE.TEXT:
      return 'text';
    case TYPE.IMAGE:
      return 'image';
    default:
      return 'file';
  }
}
