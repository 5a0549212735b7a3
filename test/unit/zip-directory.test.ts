import { execFileSync } from 'node:child_process';
import { createReadStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ByteSource } from '../../src/archive/source.js';
import { openZip } from '../../src/archive/zip.js';
import { readZipDirectory } from '../../src/archive/zip-directory.js';

/** A ByteSource over a local file, in chunks of `chunk` bytes (small ones cut records anywhere). */
const sourceOf = (file: string, chunk = 64 * 1024) => {
  const size = readFileSync(file).length;
  return new ByteSource({ file: { size, modified: new Date(), open: async (start, end) => createReadStream(file, { start, end, highWaterMark: chunk }) } }, size, null as never);
};
const text = async (s: NodeJS.ReadableStream) => {
  const chunks: Buffer[] = [];
  for await (const c of s) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
};

describe('zip central directory reader', () => {
  let dir: string;
  const body = Buffer.from(Array.from({ length: 50_000 }, (_, i) => (i * 31) % 256));

  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'atrium-zipdir-'));
    writeFileSync(path.join(dir, 'b.bin'), body);
    execFileSync('python3', ['-c', `
import zipfile, sys
with zipfile.ZipFile(sys.argv[1], 'w') as z:
    z.writestr('a.txt', 'hello', zipfile.ZIP_STORED)
    z.writestr('dir/', '')
    z.write(sys.argv[2], 'dir/b.bin', zipfile.ZIP_DEFLATED)
    z.writestr('名前.txt', 'utf8 name', zipfile.ZIP_DEFLATED)
`, path.join(dir, 'plain.zip'), path.join(dir, 'b.bin')]);
    // A self-extractor's layout: data before the zip, offsets not adjusted.
    writeFileSync(path.join(dir, 'prepended.zip'), Buffer.concat([Buffer.alloc(4096, 7), readFileSync(path.join(dir, 'plain.zip'))]));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([64 * 1024, 1, 7, 45, 46, 47])('streams the records with their names, sizes and methods (read in chunks of %i bytes)', async (chunk) => {
    const d = await readZipDirectory(sourceOf(path.join(dir, 'plain.zip'), chunk), '');
    expect(d.entries).toBe(4);
    const seen: Array<[string, number, number]> = [];
    await d.walk((r) => seen.push([r.name, r.size, r.method]));
    expect(seen).toEqual([
      ['a.txt', 5, 0],
      ['dir/', 0, 0],
      ['dir/b.bin', 50_000, 8],
      ['名前.txt', 9, 8],
    ]);
  });

  it('reads entries of a zip with data before it (offsets shifted) byte for byte', async () => {
    const zip = await openZip(sourceOf(path.join(dir, 'prepended.zip')), '', () => {});
    expect([...zip.entries].map((e) => [e.path, e.isDir])).toEqual([
      ['/a.txt', false],
      ['/dir', true],
      ['/dir/b.bin', false],
      ['/名前.txt', false],
    ]);
    expect((await text(await zip.open('/dir/b.bin', ''))).equals(body)).toBe(true);
    expect((await text(await zip.open('/a.txt', ''))).toString()).toBe('hello');
  });

  it('a damaged entry fails with a clear error instead of wrong bytes', async () => {
    const bytes = readFileSync(path.join(dir, 'plain.zip'));
    const at = bytes.indexOf('hello');
    bytes[at] = 'j'.charCodeAt(0);
    writeFileSync(path.join(dir, 'damaged.zip'), bytes);
    const zip = await openZip(sourceOf(path.join(dir, 'damaged.zip')), '', () => {});
    await expect(text(await zip.open('/a.txt', ''))).rejects.toThrow('the zip entry /a.txt is damaged (size or CRC-32 does not match)');
  });

  it('refuses what is not a zip, and too many entries before reading the directory', async () => {
    writeFileSync(path.join(dir, 'not.zip'), Buffer.alloc(1000, 1));
    await expect(readZipDirectory(sourceOf(path.join(dir, 'not.zip')), '')).rejects.toThrow('not a readable zip archive: no end of central directory');
    await expect(openZip(sourceOf(path.join(dir, 'plain.zip')), '', (n) => {
      throw new Error(`refused ${n}`);
    })).rejects.toThrow('refused 4');
    await expect(readZipDirectory(sourceOf(path.join(dir, 'plain.zip')), 'no-such-encoding')).rejects.toThrow('unknown name encoding');
  });
});
