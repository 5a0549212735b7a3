import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Obj } from '../../src/drivers/types.js';
import { objJson, objText } from '../../src/server/obj-json.js';
import { BACKENDS } from '../helpers/backends.js';
import { startServer, type TestServer } from '../helpers/server.js';

describe('object JSON: text and object forms agree', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!);
  });
  afterAll(async () => {
    await s.destroy();
  });

  const samples: Obj[] = [
    { name: 'plain.mp4', size: 12, isDir: false, modified: new Date(1700000000123), created: new Date(1600000000000) },
    { name: 'folder "quoted" \\ back', size: 0, isDir: true, modified: new Date(0) },
    { name: 'ünïcødé 报告 \u0001 ctrl.txt', size: 2 ** 40, isDir: false, modified: new Date(1700000000000), hash: { md5: 'abc', sha1: 'def' } },
    { name: 'thumb.png', size: 1, isDir: false, modified: new Date(1700000000000), selfThumb: true },
    { name: 'remote.jpg', size: 1, isDir: false, modified: new Date(1700000000000), thumb: 'https://cdn.example/t?a=1&b="x"' },
  ];

  for (const signed of [true, false]) {
    it(`same keys, order and values (signed: ${signed})`, () => {
      for (const obj of samples) {
        const text = objText(s.core, obj, '/some dir', () => signed);
        const parsed = JSON.parse(text);
        const object = objJson(s.core, obj, '/some dir', () => signed);
        expect(parsed).toEqual(object);
        expect(Object.keys(parsed)).toEqual(Object.keys(object));
      }
    });
  }

  it('signs the full path and types by name', () => {
    const o = JSON.parse(objText(s.core, samples[0]!, '/', () => true));
    expect(o.sign).toBe(s.core.signer.sign('/plain.mp4'));
    expect(o.type).toBe(2);
    expect(o.created).toBe(new Date(1600000000000).toISOString());
    const d = JSON.parse(objText(s.core, samples[1]!, '/x', () => true));
    expect(d).toMatchObject({ is_dir: true, type: 1, sign: '', hashinfo: 'null', hash_info: null, created: d.modified });
  });
});
