import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';

/**
 * Every file (with its content hash), folder and link below `dir`, except the `allowed` subtree:
 * equal before and after an attack means nothing outside the allowed area was written. The
 * Local driver's own upload folder may appear; what is left in it may not.
 */
export function fingerprint(dir: string, allowed: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const full = path.join(d, name);
      if (full === allowed || full.startsWith(allowed + path.sep)) continue;
      const st = lstatSync(full);
      if (st.isSymbolicLink()) out.push(`${full} -> ${readlinkSync(full)}`);
      else if (st.isDirectory()) {
        if (name !== '.atrium-tmp') out.push(`${full}/`);
        walk(full);
      } else out.push(`${full} ${createHash('sha256').update(readFileSync(full)).digest('hex')}`);
    }
  };
  walk(dir);
  return out;
}
