import { spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { BadRequest, Missing } from '../errors.js';
import { type ArchiveEntry, safeInnerPath } from './entries.js';
import { sevenZip } from './formats.js';
import { type OpenedArchive, under, wrongPassword } from './reader.js';
import type { ByteSource } from './source.js';

/** 7z's words for a missing or wrong password (it has no exit code of its own for them). */
const PASSWORD_TEXT = /wrong password|can ?not open encrypted archive|encrypted archive/i;
/** 7z asked for a password on its closed stdin: the archive needs one and none was given. */
const PROMPTED = /Enter password/;

/** Runs `7z` with the archive's password given (never prompted: stdin is closed). */
function run7z(args: string[], password: string): { stdout: Readable; result: Promise<void> } {
  const child = spawn(sevenZip() ?? '7z', password ? [...args, `-p${password}`] : args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let prompted = false;
  child.stderr.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-2000)));
  child.stdout.on('data', (c: Buffer) => {
    if (!prompted && PROMPTED.test(c.toString('latin1'))) prompted = true;
  });
  const result = new Promise<void>((resolve, reject) => {
    child.on('error', (err) => reject(new BadRequest(`7z could not run: ${err.message}`)));
    child.on('close', (code) => {
      if (code === 0) return resolve();
      if (prompted || PASSWORD_TEXT.test(stderr)) return reject(wrongPassword());
      reject(new BadRequest(`7z failed: ${stderr.trim().split('\n').slice(-2).join(' ') || `exit ${code}`}`));
    });
  });
  return { stdout: child.stdout, result };
}

/** `7z l -slt` blocks (`Key = value` lines) as entries; the first block describes the archive itself. */
function parseSlt(text: string): Array<Record<string, string>> {
  const body = text.split(/^----------$/m)[1] ?? '';
  return body
    .split(/\r?\n\r?\n/)
    .map((block) => Object.fromEntries(block.split(/\r?\n/).filter((l) => l.includes(' = ')).map((l) => [l.slice(0, l.indexOf(' = ')), l.slice(l.indexOf(' = ') + 3)])))
    .filter((b) => b.Path !== undefined);
}

/**
 * 7z through the Debian 7-Zip tool (`7zz`, package 7zip): it needs a seekable file, so the
 * archive is first copied into a private folder under temp_dir (removed on close).
 */
export async function open7z(source: ByteSource, tempDir: string, archiveName: string, password: string): Promise<OpenedArchive> {
  const { dir, file } = await source.toTempFile(tempDir, path.extname(archiveName));
  try {
    const list = run7z(['l', '-slt', '-sccUTF-8', file], password);
    let out = '';
    list.stdout.on('data', (c: Buffer) => (out += c.toString()));
    await list.result;
    const entries: ArchiveEntry[] = [];
    const refused: string[] = [];
    const rawName = new Map<string, string>();
    for (const b of parseSlt(out)) {
      const p = safeInnerPath(b.Path!);
      const isDir = (b.Folder ?? '') === '+' || (b.Attributes ?? '').startsWith('D');
      if (!p || (b.Attributes ?? '').includes('l') || b['Symbolic Link']) {
        refused.push(b.Path!);
        continue;
      }
      const modified = b.Modified ? new Date(`${b.Modified.replace(' ', 'T').slice(0, 19)}Z`) : new Date(0);
      entries.push({ path: p, size: Number(b.Size ?? 0) || 0, isDir, modified: Number.isNaN(modified.getTime()) ? 0 : modified.getTime(), encrypted: b.Encrypted === '+' });
      rawName.set(p, b.Path!);
    }
    const read = (inner: string, pass: string): Readable => {
      const run = run7z(['x', '-so', '-sccUTF-8', file, rawName.get(inner)!], pass);
      const out = new PassThrough();
      run.stdout.pipe(out, { end: false });
      run.result.then(() => out.end(), (err: unknown) => out.destroy(err as Error));
      return out;
    };
    const check = async (inner: string, pass: string) => {
      const e = entries.find((x) => x.path === inner);
      if (e?.encrypted && !pass) throw wrongPassword();
      // `7z t` on the one entry: a wrong password is known before any byte is sent.
      if (e?.encrypted) await run7z(['t', file, rawName.get(inner)!], pass).result;
    };
    return {
      comment: '',
      encrypted: entries.some((e) => e.encrypted),
      entries,
      count: entries.length,
      refused,
      async open(inner, pass) {
        if (!rawName.has(inner) || entries.find((e) => e.path === inner)?.isDir) throw new Missing(`${inner} is not a file in the archive`);
        await check(inner, pass);
        return read(inner, pass);
      },
      async extract(prefix, pass, each, signal) {
        for (const e of entries) {
          if (e.isDir || !under(prefix, e.path)) continue;
          signal?.throwIfAborted();
          await check(e.path, pass);
          await each(e, read(e.path, pass));
        }
      },
      close: () => rm(dir, { recursive: true, force: true }),
    };
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}
