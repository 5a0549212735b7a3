import { mkdtempSync, rmSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { copyTree } from '../../src/drivers/local/copy-tree.js';

const base = mkdtempSync(path.join(os.tmpdir(), 'atrium-copytree-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('copyTree', () => {
  it('copies every file byte for byte, keeps symlinks, modes and times', async () => {
    const src = path.join(base, 'src');
    await fs.mkdir(path.join(src, 'sub', 'deeper'), { recursive: true });
    for (let i = 0; i < 300; i++) await fs.writeFile(path.join(src, `f${i}.txt`), `file ${i}\n`.repeat(i));
    await fs.writeFile(path.join(src, 'sub', 'deeper', 'leaf.bin'), Buffer.alloc(3 << 20, 7));
    await fs.chmod(path.join(src, 'f1.txt'), 0o640);
    await fs.symlink('../f2.txt', path.join(src, 'sub', 'link'));
    const old = new Date('2020-01-02T03:04:05Z');
    await fs.utimes(path.join(src, 'f3.txt'), old, old);
    await fs.utimes(path.join(src, 'sub'), old, old);

    const dst = path.join(base, 'dst');
    await copyTree(src, dst);

    for (let i = 0; i < 300; i++) expect(await fs.readFile(path.join(dst, `f${i}.txt`), 'utf8')).toBe(`file ${i}\n`.repeat(i));
    expect((await fs.readFile(path.join(dst, 'sub', 'deeper', 'leaf.bin'))).equals(Buffer.alloc(3 << 20, 7))).toBe(true);
    expect((await fs.stat(path.join(dst, 'f1.txt'))).mode & 0o777).toBe(0o640);
    expect(await fs.readlink(path.join(dst, 'sub', 'link'))).toBe('../f2.txt');
    expect((await fs.stat(path.join(dst, 'f3.txt'))).mtime.getTime()).toBe(old.getTime());
    expect((await fs.stat(path.join(dst, 'sub'))).mtime.getTime()).toBe(old.getTime());
  });

  it('copies a single file', async () => {
    await fs.writeFile(path.join(base, 'one.txt'), 'one');
    await copyTree(path.join(base, 'one.txt'), path.join(base, 'one-copy.txt'));
    expect(await fs.readFile(path.join(base, 'one-copy.txt'), 'utf8')).toBe('one');
  });

  it('refuses to overwrite an existing target', async () => {
    await fs.mkdir(path.join(base, 'a'));
    await fs.writeFile(path.join(base, 'a', 'x'), 'new');
    await fs.mkdir(path.join(base, 'b'));
    await expect(copyTree(path.join(base, 'a'), path.join(base, 'b'))).rejects.toMatchObject({ code: 'EEXIST' });
    await fs.writeFile(path.join(base, 'kept'), 'kept');
    await expect(copyTree(path.join(base, 'a', 'x'), path.join(base, 'kept'))).rejects.toMatchObject({ code: 'EEXIST' });
    expect(await fs.readFile(path.join(base, 'kept'), 'utf8')).toBe('kept');
  });
});
