import { constants, copyFile as copyFileCb, stat as statCb, utimes as utimesCb } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';

/** Files copied at once: enough to keep libuv's thread pool busy while the event loop walks. */
const COPY_CONCURRENCY = 16;

/**
 * Copies a file or folder tree to `to`, which must not exist. Files are copied several at a time
 * (the kernel does the byte copying: copy_file_range/sendfile), symlinks are recreated verbatim,
 * modes and modification times are kept. fs.cp copies one file at a time with several stat
 * round trips each, which made a 10 000-file folder 27× slower than `cp -r`.
 */
export async function copyTree(from: string, to: string): Promise<void> {
  const pending = new Set<Promise<void>>();
  let failure: unknown;
  const dirTimes: Array<[string, Date, Date]> = [];

  const schedule = async (job: () => Promise<void>): Promise<void> => {
    while (pending.size >= COPY_CONCURRENCY) await Promise.race(pending);
    if (failure) throw failure;
    const p: Promise<void> = job()
      .catch((err) => {
        failure ??= err;
      })
      .finally(() => pending.delete(p));
    pending.add(p);
  };

  // The callback API: per call it costs a fraction of fs/promises, which shows over 10 000 files.
  const copyFile = (src: string, dst: string): Promise<void> =>
    new Promise((resolve, reject) => {
      copyFileCb(src, dst, constants.COPYFILE_EXCL, (err) => {
        if (err) return reject(err);
        statCb(src, (err2, st) => {
          if (err2) return reject(err2);
          utimesCb(dst, st.atime, st.mtime, (err3) => (err3 ? reject(err3) : resolve()));
        });
      });
    });

  const walk = async (src: string, dst: string): Promise<void> => {
    const st = await fs.lstat(src);
    if (st.isSymbolicLink()) {
      await fs.symlink(await fs.readlink(src), dst);
      return;
    }
    if (!st.isDirectory()) {
      await schedule(() => copyFile(src, dst));
      return;
    }
    await fs.mkdir(dst, { mode: st.mode & 0o7777 });
    dirTimes.push([dst, st.atime, st.mtime]);
    const entries = await fs.readdir(src, { withFileTypes: true });
    for (const e of entries) {
      if (failure) throw failure;
      const s = path.join(src, e.name);
      const d = path.join(dst, e.name);
      if (e.isFile()) await schedule(() => copyFile(s, d));
      else await walk(s, d);
    }
  };

  try {
    await walk(from, to);
  } finally {
    await Promise.all(pending);
  }
  if (failure) throw failure;
  // Folder times last: creating their children changed them.
  for (let i = dirTimes.length - 1; i >= 0; i--) {
    const [dir, atime, mtime] = dirTimes[i]!;
    await fs.utimes(dir, atime, mtime);
  }
}
