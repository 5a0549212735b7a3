/** What the system errors of the server's own file system mean, without the paths Node names. */
const SYSTEM_TEXT: Record<string, string> = {
  ENAMETOOLONG: 'a file name is too long for the server',
  ENOSPC: 'no space left on the server',
  EDQUOT: 'the server is over its disk quota',
  EACCES: "the server's file system refused access",
  EPERM: "the server's file system refused the operation",
  EROFS: "the server's file system is read-only",
  ENOENT: 'a file the task needs is no longer there',
  EEXIST: 'a file is already there',
  EISDIR: 'a folder is where a file was expected',
  ENOTDIR: 'a file is where a folder was expected',
  ENOTEMPTY: 'a folder is not empty',
  EMFILE: 'the server has too many files open',
  ENFILE: 'the server has too many files open',
  EIO: "an I/O error on the server's disk",
  EILSEQ: 'a file name is not valid on the server',
  EXDEV: 'a file could not be moved across file systems on the server',
};

/** Node's system error text: `ENAMETOOLONG: name too long, open '/data/temp/…'` (and `-> '…'` for two paths). */
const NODE_SYSTEM_MESSAGE = /\b(E[A-Z0-9]{2,}): ([^,]*), [a-z_]+ '[^']*'(?: -> '[^']*')?/g;

/**
 * A task's error as the user may read it: a system error of the server's file system (or its
 * text wrapped into another error) is said in words without the absolute paths Node puts in
 * it, and any of the server's own folders still named is cut to `…`.
 */
export function taskErrorText(err: unknown, hostRoots: readonly string[] = []): string {
  const code = systemCode(err);
  let text = code && SYSTEM_TEXT[code] ? `${SYSTEM_TEXT[code]} (${code})` : (err as Error)?.message || String(err);
  text = text.replace(NODE_SYSTEM_MESSAGE, (_m, c: string, what: string) => `${SYSTEM_TEXT[c] ?? what} (${c})`);
  for (const root of hostRoots) if (root.length > 1) text = text.split(root).join('…');
  return text;
}

function systemCode(err: unknown): string | undefined {
  for (let e = err as { code?: unknown; syscall?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 4; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string' && typeof e.syscall === 'string' && /^E[A-Z0-9]+$/.test(e.code)) return e.code;
  }
  return undefined;
}
