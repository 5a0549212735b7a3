import type { Obj } from '../api';
import { extOf } from '../format';
import type { IconName } from './Icon';

/** Type codes of the wire API (wire-api.md §6.2). */
export const TYPE = { UNKNOWN: 0, FOLDER: 1, VIDEO: 2, AUDIO: 3, TEXT: 4, IMAGE: 5 } as const;

const CODE = new Set('js,mjs,cjs,jsx,ts,mts,cts,tsx,py,go,rs,java,kt,c,h,cc,cpp,hpp,cs,rb,php,sh,bash,zsh,ps1,bat,swift,lua,pl,r,dart,scala,sql,css,scss,less,html,htm,xml,vue,svelte,json,yml,yaml,toml,ini,conf,cfg,env,gradle,cmake,mk,dockerfile'.split(','));
const ARCHIVES = new Set('zip,7z,rar,tar,gz,tgz,bz2,xz,zst,iso,dmg'.split(','));
const SHEETS = new Set('csv,tsv,xls,xlsx,ods,numbers'.split(','));

/** The icon of an entry: its kind by extension first (markdown, code, archive…), then by wire type. */
export function iconOf(o: Pick<Obj, 'is_dir' | 'type' | 'name'>): IconName {
  if (o.is_dir) return 'folder';
  const ext = extOf(o.name);
  if (ext === 'pdf') return 'pdf';
  if (ext === 'md' || ext === 'markdown') return 'markdown';
  if (CODE.has(ext)) return 'code';
  if (ARCHIVES.has(ext)) return 'archive';
  if (SHEETS.has(ext)) return 'sheet';
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
