import { spawnSync } from 'node:child_process';

/**
 * The archive formats Atrium reads, by name suffix. zip through @zip.js/zip.js (ranged reads of
 * the central directory, ZipCrypto and AES); the tar family and single compressed files through
 * tar-stream with Node's zlib (gzip) or the Debian tools bzip2, xz and zstd (Node 20 has no
 * bzip2/xz/zstd codec); 7z through the Debian 7-Zip tool (`7zz` of package 7zip, or p7zip's `7z`);
 * rar (RAR 4 and 5) through node-unrar-js (unrar in WebAssembly: Debian's 7-Zip has no RAR codec).
 */
export type ArchiveFormat = 'zip' | 'tar' | 'tar.gz' | 'tar.bz2' | 'tar.xz' | 'tar.zst' | 'gz' | 'bz2' | 'xz' | 'zst' | '7z' | 'rar';

/** How a format's bytes are compressed before (or without) a tar layer. */
export type Codec = 'none' | 'gzip' | 'bzip2' | 'xz' | 'zstd';

/** Longest suffix first, so `.tar.gz` wins over `.gz`. */
const SUFFIXES: Array<[string, ArchiveFormat]> = [
  ['.tar.gz', 'tar.gz'],
  ['.tar.bz2', 'tar.bz2'],
  ['.tar.xz', 'tar.xz'],
  ['.tar.zst', 'tar.zst'],
  ['.tgz', 'tar.gz'],
  ['.tbz2', 'tar.bz2'],
  ['.txz', 'tar.xz'],
  ['.tzst', 'tar.zst'],
  ['.zip', 'zip'],
  ['.tar', 'tar'],
  ['.gz', 'gz'],
  ['.bz2', 'bz2'],
  ['.xz', 'xz'],
  ['.zst', 'zst'],
  ['.7z', '7z'],
  ['.rar', 'rar'],
];

export const CODEC_OF: Record<Exclude<ArchiveFormat, 'zip' | '7z' | 'rar'>, Codec> = {
  tar: 'none',
  'tar.gz': 'gzip',
  'tar.bz2': 'bzip2',
  'tar.xz': 'xz',
  'tar.zst': 'zstd',
  gz: 'gzip',
  bz2: 'bzip2',
  xz: 'xz',
  zst: 'zstd',
};

/** The command line each external codec or archiver needs on PATH. */
const TOOL_OF: Partial<Record<ArchiveFormat, string>> = {
  'tar.bz2': 'bzip2',
  bz2: 'bzip2',
  'tar.xz': 'xz',
  xz: 'xz',
  'tar.zst': 'zstd',
  zst: 'zstd',
  '7z': 'SEVEN_ZIP',
};

const found = new Map<string, boolean>();
/** Is a command on PATH (looked up once per process). */
export function hasTool(cmd: string): boolean {
  let ok = found.get(cmd);
  if (ok === undefined) {
    ok = spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
    found.set(cmd, ok);
  }
  return ok;
}

/** The 7-Zip command: `7zz` (Debian package 7zip) or `7z` (p7zip-full), whichever is installed. */
export function sevenZip(): string | undefined {
  return ['7zz', '7z'].find(hasTool);
}

const supported = (f: ArchiveFormat) => {
  const tool = TOOL_OF[f];
  if (tool === 'SEVEN_ZIP') return sevenZip() !== undefined;
  return tool === undefined || hasTool(tool);
};

/** The format of a file by its name, when Atrium can read it here. */
export function formatOf(name: string): ArchiveFormat | undefined {
  const lower = name.toLowerCase();
  for (const [suffix, format] of SUFFIXES) {
    if (lower.endsWith(suffix) && lower.length > suffix.length) return supported(format) ? format : undefined;
  }
  return undefined;
}

/** `/api/public/archive_extensions`: the suffixes this process can open (tools found on PATH). */
export function archiveExtensions(): string[] {
  return SUFFIXES.filter(([, f]) => supported(f)).map(([s]) => s);
}
