import type { Obj } from '../drivers/types.js';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** An `ls -l` line for a folder entry: SFTP v3 `longname`, FTP `LIST`. */
export function lsLine(obj: Obj, mode: number, owner: string): string {
  const bits = (m: number) => `${m & 4 ? 'r' : '-'}${m & 2 ? 'w' : '-'}${m & 1 ? 'x' : '-'}`;
  const perms = `${obj.isDir ? 'd' : '-'}${bits(mode >> 6)}${bits(mode >> 3)}${bits(mode)}`;
  const d = obj.modified;
  const recent = Math.abs(Date.now() - d.getTime()) < 180 * 86_400_000;
  const pad = (n: number) => String(n).padStart(2, '0');
  const when = `${MONTHS[d.getMonth()]} ${String(d.getDate()).padStart(2)} ${recent ? `${pad(d.getHours())}:${pad(d.getMinutes())}` : ` ${d.getFullYear()}`}`;
  return `${perms}    1 ${owner.padEnd(8)} ${owner.padEnd(8)} ${String(obj.size).padStart(12)} ${when} ${obj.name}`;
}
