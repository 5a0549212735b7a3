import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { countBytes } from '../../src/audit/record.js';
import { deferred } from '../../src/util/file-source.js';

/**
 * A body that fails before its reader listens (the client gone while an upload's checks run) is
 * no unhandled 'error' (vitest fails the run on one): the reader sees the failure when it reads.
 */
describe('streams that fail before they are read', () => {
  it('countBytes: the failure reaches the reader and the count, not the process', async () => {
    const body = new PassThrough();
    let done: [number, unknown] | undefined;
    const counted = countBytes(body, (n, err) => (done ??= [n, err])); // the first call counts (TransferDone is once)
    body.destroy(new Error('aborted'));
    await new Promise((r) => setTimeout(r, 20));
    expect(done?.[1]).toMatchObject({ message: 'aborted' });
    await expect((async () => { for await (const _ of counted) void _; })()).rejects.toThrow('aborted');
  });

  it('deferred: a reader that fails to open is the reader\'s error, seen when read', async () => {
    const out = deferred(async () => {
      throw new Error('EACCES');
    });
    out.resume();
    await new Promise((r) => setTimeout(r, 20));
    await expect((async () => { for await (const _ of out) void _; })()).rejects.toThrow('EACCES');
  });
});
