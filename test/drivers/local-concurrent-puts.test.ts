import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalDriver } from '../../src/drivers/local/index.js';
import type { DriverContext } from '../../src/drivers/types.js';
import { makeTree } from '../helpers/files.js';

/**
 * Many small puts at once on one Local storage (a sync run's transfers): the last put done removes
 * the emptied temporary folder, and a put starting meanwhile must not lose its temporary file to
 * that removal (before: 2 of 10 000 failed, ENOENT from mkdir of the temporary folder).
 */
describe('Local driver: concurrent puts and the temporary folder', () => {
  const root = makeTree({});
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('stores every one of 10 000 tiny files put 4 at a time, each worker pausing between its puts', async () => {
    const driver = new LocalDriver({ root_folder_path: root }, { mountPath: '/', tempDir: root, fileType: () => 0 } as unknown as DriverContext);
    await driver.init();
    const n = 10_000;
    let next = 0;
    const failures: string[] = [];
    const worker = async () => {
      while (next < n) {
        const i = next++;
        const body = `tiny ${i}\n`;
        // As a sync run's transfers do (each reads its source first, on the same thread pool): now and then no put is in flight.
        await driver.get('/');
        await driver.get('/');
        await driver.put('/', { name: `t${i}.txt`, size: body.length, stream: Readable.from([Buffer.from(body)]) }).catch((err: Error) => failures.push(`${i}: ${err.message}`));
      }
    };
    await Promise.all(Array.from({ length: 4 }, worker));
    expect(failures).toEqual([]);
    const names = readdirSync(root).filter((x) => x.endsWith('.txt'));
    expect(names).toHaveLength(n);
    expect(readFileSync(path.join(root, 't1234.txt'), 'utf8')).toBe('tiny 1234\n');
  }, 120_000);

  it('a storage mounted again while a put runs (the old driver serves meanwhile) leaves that put its temporary file', async () => {
    const ctx = { mountPath: '/', tempDir: root, fileType: () => 0 } as unknown as DriverContext;
    const old = new LocalDriver({ root_folder_path: root }, ctx);
    await old.init();
    const body = new PassThrough();
    const put = old.put('/', { name: 'during-remount.txt', size: 10, stream: body });
    body.write('first');
    await new Promise((r) => setTimeout(r, 50)); // its temporary file exists now
    const again = new LocalDriver({ root_folder_path: root }, ctx);
    await again.init(); // sweeps what dead processes and dropped drivers left
    body.end('-last');
    await put;
    expect(readFileSync(path.join(root, 'during-remount.txt'), 'utf8')).toBe('first-last');
    await old.drop();
  });
});
