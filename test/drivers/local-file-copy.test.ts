import { createReadStream, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { countBytes } from '../../src/audit/record.js';
import { LocalDriver, TEMP_FOLDER } from '../../src/drivers/local/index.js';
import type { DriverContext } from '../../src/drivers/types.js';
import { wholeFile } from '../../src/util/file-source.js';
import { makeTree } from '../helpers/files.js';

/**
 * A put whose stream stands for a whole file of this disk (util/file-source.ts: a Local → Local
 * sync or copy) is stored by copying the file: the stream is never opened, the bytes and time are
 * the file's, a counting wrapper counts what was copied, and a file that no longer holds the
 * bytes the put declared is refused as a streamed body would be.
 */
describe('Local driver: a put of a file of this disk copies it', () => {
  const root = makeTree({ 'src/small.txt': 'small bytes\n', 'src/big.bin': '', 'dst/': '' });
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const driver = new LocalDriver({ root_folder_path: path.join(root, 'dst') }, { mountPath: '/', tempDir: root, fileType: () => 0 } as unknown as DriverContext);
  const big = Buffer.alloc(3 * 1024 * 1024 + 7, 'b'); // past the synchronous copies' size
  writeFileSync(path.join(root, 'src/big.bin'), big);

  /** A stream of the file that records whether anything opened it. */
  const source = (name: string) => {
    const file = path.join(root, 'src', name);
    const opened = { n: 0 };
    const stream = wholeFile(file, statSync(file).size, async () => {
      opened.n++;
      return createReadStream(file);
    });
    return { file, stream, opened, size: statSync(file).size };
  };

  it('stores small and large files with their bytes and time, never reading the stream; a count sees the bytes copied', async () => {
    await driver.init();
    const modified = new Date('2024-05-06T07:08:09.000Z');
    for (const name of ['small.txt', 'big.bin']) {
      const s = source(name);
      let counted = -1;
      const stream = countBytes(s.stream, (n) => (counted = n));
      await driver.put('/', { name, size: s.size, stream, modified });
      expect(readFileSync(path.join(root, 'dst', name)).equals(readFileSync(s.file))).toBe(true);
      expect(statSync(path.join(root, 'dst', name)).mtime.toISOString()).toBe(modified.toISOString());
      expect(s.opened.n).toBe(0);
      expect(stream.destroyed).toBe(true);
      expect(counted).toBe(s.size);
    }
    expect(existsSync(path.join(root, 'dst', TEMP_FOLDER))).toBe(false);
  });

  it('a file that changed since it was looked at is refused and leaves nothing', async () => {
    const s = source('small.txt');
    writeFileSync(s.file, 'small bytes, and more\n');
    await expect(driver.put('/', { name: 'changed.txt', size: s.size, stream: s.stream })).rejects.toThrow(/not the 12 declared/);
    expect(readdirSync(path.join(root, 'dst')).sort()).toEqual(['big.bin', 'small.txt']);
  });

  it('read as a stream, it gives the bytes of the file (opened on the first read)', async () => {
    const s = source('big.bin');
    expect(s.opened.n).toBe(0);
    let counted = -1;
    const chunks: Buffer[] = [];
    for await (const c of countBytes(s.stream, (n) => (counted = n))) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).equals(big)).toBe(true);
    expect([s.opened.n, counted]).toEqual([1, big.length]);
  });
});
