import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { UsageError } from './common.js';

/**
 * One `atrium server` per SQLite database: a second one would share the file without sharing
 * its caches, locks or task queue (a cluster needs PostgreSQL or MySQL and Redis). The lock is
 * `<db_file>.server` holding `host pid`; one left by a process that is gone is taken over.
 */
export function lockSqliteDatabase(dbFile: string): () => void {
  const lockFile = `${dbFile}.server`;
  const mine = `${hostname()} ${process.pid}\n`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockFile, 'wx', 0o600);
      writeSync(fd, mine);
      closeSync(fd);
      return () => {
        try {
          if (readFileSync(lockFile, 'utf8') === mine) rmSync(lockFile, { force: true });
        } catch {
          // already gone
        }
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = readHolder(lockFile);
    if (holder && isAlive(holder)) {
      throw new UsageError(`the database ${dbFile} is in use by another atrium server (pid ${holder.pid} on ${holder.host}); stop it first, or give this one another --data`);
    }
    rmSync(lockFile, { force: true });
  }
  throw new UsageError(`could not take ${lockFile}: another server is starting on the same database`);
}

function readHolder(lockFile: string): { host: string; pid: number } | undefined {
  try {
    const [host, pid] = readFileSync(lockFile, 'utf8').trim().split(' ');
    return host && pid && /^\d+$/.test(pid) ? { host, pid: Number(pid) } : undefined;
  } catch {
    return undefined;
  }
}

/** A holder on another host can't be checked from here: taken as alive (the data folder is shared). */
function isAlive(holder: { host: string; pid: number }): boolean {
  if (holder.host !== hostname()) return true;
  if (holder.pid === process.pid) return false;
  try {
    process.kill(holder.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  // The pid of a server killed with -9 may be another program's by now.
  try {
    return readFileSync(`/proc/${holder.pid}/cmdline`, 'utf8').includes('atrium');
  } catch {
    return true; // no /proc: the pid's owner can't be told, so it is taken as the server
  }
}
