import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sevenZip } from '../../src/archive/formats.js';
import { rar4, rar5, type RarEntry } from '../helpers/rar.js';

/** The tree every format's fixture holds (folders, a binary file, a deeper file). */
export const TREE: Record<string, Buffer> = {
  'hello.txt': Buffer.from('hello from the archive\n'),
  'docs/readme.md': Buffer.from('# inside\n\nsome words\n'),
  'docs/deep/data.bin': Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 7919) % 251)),
};

const run = (cmd: string, args: string[], cwd: string) => execFileSync(cmd, args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });

/**
 * Makes the fixtures with Debian's own tools in a fresh folder: zip (Info-ZIP), tar with gzip,
 * bzip2, xz and zstd, the single-file compressors, and 7-Zip (7z, AES zip). Returns the folder
 * of archives. rar has no writer in Debian main: the rar fixtures come from test/helpers/rar.ts
 * (stored entries) and are checked with libarchive's bsdtar before use (see checkRar).
 */
export function makeFixtures(): string {
  const work = mkdtempSync(path.join(os.tmpdir(), 'atrium-archive-src-'));
  const src = path.join(work, 'src');
  for (const [rel, body] of Object.entries(TREE)) {
    mkdirSync(path.dirname(path.join(src, rel)), { recursive: true });
    writeFileSync(path.join(src, rel), body);
  }
  const out = path.join(work, 'out');
  mkdirSync(out);
  const files = Object.keys(TREE);
  run('zip', ['-q', '-r', path.join(out, 'deflate.zip'), ...files], src);
  run('zip', ['-q', '-0', '-r', path.join(out, 'stored.zip'), ...files], src);
  run('zip', ['-q', '-r', '-P', 'secret', path.join(out, 'zipcrypto.zip'), ...files], src);
  run('tar', ['-cf', path.join(out, 'plain.tar'), ...files], src);
  run('tar', ['-czf', path.join(out, 'gz.tar.gz'), ...files], src);
  run('tar', ['-czf', path.join(out, 'short.tgz'), ...files], src);
  run('tar', ['-cjf', path.join(out, 'bz.tar.bz2'), ...files], src);
  run('tar', ['-cJf', path.join(out, 'xz.tar.xz'), ...files], src);
  run('tar', ['--zstd', '-cf', path.join(out, 'zst.tar.zst'), ...files], src);
  for (const [tool, ext] of [['gzip', 'gz'], ['bzip2', 'bz2'], ['xz', 'xz'], ['zstd', 'zst']] as const) {
    writeFileSync(path.join(out, `single.txt.${ext}`), execFileSync(tool, ['-c', path.join(src, 'hello.txt')], { stdio: ['ignore', 'pipe', 'ignore'] }));
  }
  const sz = sevenZip();
  if (sz) {
    run(sz, ['a', '-bd', path.join(out, 'seven.7z'), ...files], src);
    run(sz, ['a', '-bd', '-psecret', '-mhe=on', path.join(out, 'locked.7z'), ...files], src);
    run(sz, ['a', '-bd', '-tzip', '-psecret', '-mem=AES256', path.join(out, 'aes.zip'), ...files], src);
  }
  // zip-slip and links, written with Python's zipfile/tarfile (Info-ZIP and tar strip `..`).
  run('python3', ['-c', `
import zipfile, tarfile, io
with zipfile.ZipFile('slip.zip', 'w') as z:
    z.writestr('../escaped.txt', 'out')
    z.writestr('/abs.txt', 'abs')
    z.writestr('C:/drive.txt', 'drive')
    z.writestr('..\\\\back.txt', 'back')
    z.writestr('ok.txt', 'fine')
    i = zipfile.ZipInfo('link'); i.external_attr = (0o120777 << 16); z.writestr(i, '/etc/passwd')
with tarfile.open('slip.tar', 'w') as t:
    for name, body in [('../escaped.txt', b'out'), ('/abs.txt', b'abs'), ('ok.txt', b'fine')]:
        i = tarfile.TarInfo(name); i.size = len(body); t.addfile(i, io.BytesIO(body))
    i = tarfile.TarInfo('link'); i.type = tarfile.SYMTYPE; i.linkname = '/etc/passwd'; t.addfile(i)
`], out);
  // rar: RAR 5 and RAR 4, RAR 5 with encrypted files, with encrypted headers, and zip-slip names.
  const rarTree: RarEntry[] = [{ name: 'docs/', dir: true }, ...Object.entries(TREE).map(([name, body]) => ({ name, body }))];
  writeFileSync(path.join(out, 'plain5.rar'), rar5(rarTree));
  writeFileSync(path.join(out, 'plain4.rar'), rar4(rarTree));
  writeFileSync(path.join(out, 'enc5.rar'), rar5(rarTree, { password: 'secret' }));
  writeFileSync(path.join(out, 'locked5.rar'), rar5(rarTree, { password: 'secret', encryptHeaders: true }));
  writeFileSync(path.join(out, 'slip.rar'), rar5(['../escaped.txt', '/abs.txt', 'ok.txt'].map((name) => ({ name, body: Buffer.from(name) }))));
  for (const f of ['plain5.rar', 'plain4.rar', 'enc5.rar']) checkRar(path.join(out, f), f !== 'enc5.rar');
  // bsdtar does not decrypt: it must see the archive encryption header of the locked one.
  const locked = spawnSync('bsdtar', ['-tf', path.join(out, 'locked5.rar')], { encoding: 'utf8' });
  if (locked.status === 0 || !/Encryption is not supported/.test(locked.stderr)) throw new Error(`bsdtar read locked5.rar: ${locked.stderr}`);
  // A bomb: 64 MiB of zeros in a zip of about 64 KiB.
  run('sh', ['-c', 'head -c 67108864 /dev/zero > zeros.bin && zip -q bomb.zip zeros.bin && rm zeros.bin'], out);
  // Names in GBK without the UTF-8 flag (Info-ZIP stores the bytes it is given).
  const gbkDir = path.join(work, 'gbk');
  mkdirSync(gbkDir);
  run('python3', ['-c', "open('中文.txt'.encode('gbk'), 'wb').write(b'gbk name')"], gbkDir);
  execFileSync('zip', ['-q', path.join(out, 'gbk.zip'), '-r', '.'], { cwd: gbkDir, env: { ...process.env, LC_ALL: 'C' }, stdio: 'ignore' });
  return out;
}

/** A zip of `files` (inner paths → bytes) made by Info-ZIP, ZipCrypto-encrypted with `password`. */
export function makeZip(files: Record<string, Buffer>, password?: string): Buffer {
  const work = mkdtempSync(path.join(os.tmpdir(), 'atrium-zip-'));
  for (const [rel, body] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(work, 'src', rel)), { recursive: true });
    writeFileSync(path.join(work, 'src', rel), body);
  }
  run('zip', ['-q', '-r', ...(password ? ['-P', password] : []), path.join(work, 'out.zip'), ...Object.keys(files)], path.join(work, 'src'));
  const zip = readFileSync(path.join(work, 'out.zip'));
  rmSync(work, { recursive: true, force: true });
  return zip;
}

/**
 * The archives of the remote-browsing tests: `zip`, 40 incompressible entries of 100 KiB under
 * `part/` (`parts`, by inner path without the leading slash), and `locked`, one ZipCrypto entry
 * `inner/secret.txt` (`locked words\n`) with the password `zip-pass`.
 */
export function remoteArchives(): { parts: Record<string, Buffer>; zip: Buffer; locked: Buffer } {
  const parts: Record<string, Buffer> = {};
  for (let i = 0; i < 40; i++) parts[`part/f${String(i).padStart(2, '0')}.bin`] = randomBytes(100 * 1024);
  return { parts, zip: makeZip(parts), locked: makeZip({ 'inner/secret.txt': Buffer.from('locked words\n') }, 'zip-pass') };
}

/**
 * Checks a generated rar with an independent reader, libarchive's bsdtar (package
 * libarchive-tools): it lists the same names, and (unencrypted) gives back the same bytes.
 */
export function checkRar(file: string, contents: boolean): void {
  const names = execFileSync('bsdtar', ['-tf', file], { encoding: 'utf8' }).trim().split('\n').sort();
  const want = ['docs', ...Object.keys(TREE)].sort();
  if (JSON.stringify(names) !== JSON.stringify(want)) throw new Error(`bsdtar lists ${names.join(', ')} in ${file}`);
  if (!contents) return;
  for (const [rel, body] of Object.entries(TREE)) {
    if (!execFileSync('bsdtar', ['-xOf', file, rel]).equals(body)) throw new Error(`bsdtar reads other bytes for ${rel} in ${file}`);
  }
}
