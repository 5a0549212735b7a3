import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { UploadHandle } from '../../src/protocols/sftp/handles.js';

describe('SFTP upload backpressure', () => {
  it('holds the connection while the storage is more than WRITE_AHEAD (1 MiB) behind, and releases it once it caught up', async () => {
    const events: string[] = [];
    let source: Readable | undefined;
    const chunks: Buffer[] = [];
    let stored!: () => void;
    const done = new Promise<void>((resolve) => (stored = resolve));
    const upload = new UploadHandle('/f.bin', {
      // A storage that reads nothing until told to.
      start: (stream) => {
        source = stream;
        return new Promise<void>((resolve, reject) => {
          stream.on('end', resolve);
          stream.on('error', reject);
        }).then(() => stored());
      },
      spool: () => Promise.reject(new Error('no spool in this test')),
      readHold: { hold: () => events.push('hold'), release: () => events.push('release') },
    });
    const body = randomBytes(256 * 1024);
    const writes: Array<Promise<void>> = [];
    for (let i = 0; i < 24; i++) writes.push(upload.write(i * body.length, body));
    // 6 MiB written, none read: the connection is held once, the writes past 1 MiB wait.
    await new Promise((r) => setImmediate(r));
    expect(events).toEqual(['hold']);
    source!.on('data', (c: Buffer) => chunks.push(c));
    await Promise.all(writes);
    expect(events).toEqual(['hold', 'release']);
    const closing = upload.close();
    await done;
    await closing;
    const all = Buffer.concat(chunks);
    expect(all.length).toBe(24 * body.length);
    expect(all.subarray(23 * body.length).equals(body)).toBe(true);
  });
});
