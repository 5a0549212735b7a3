import { ListBucketsCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyEnv } from '../../src/config/env.js';
import { defaultConfig } from '../../src/config/defaults.js';
import { startProtocolListeners, type ProtocolListener } from '../../src/protocols/listeners.js';
import { BACKENDS } from '../helpers/backends.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { client, KEY_ID, SECRET, saveSettings } from './s3-helpers.js';

describe('S3 listener from the config', () => {
  let s: TestServer;
  let listeners: ProtocolListener[] = [];

  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!, { config: { scheme: { address: '127.0.0.1' }, s3: { enable: true, port: 0 } } });
  });
  afterAll(async () => {
    await Promise.all(listeners.map((l) => l.close()));
    await s?.destroy();
  });

  it('S3_* environment variables set the s3 section', () => {
    const c = defaultConfig();
    applyEnv(c, { ATRIUM_S3_ENABLE: 'true', ATRIUM_S3_PORT: '9100', ALIST_S3_SSL: 'false' });
    expect(c.s3).toEqual({ enable: true, port: 9100, ssl: false });
    expect(() => applyEnv(c, { ATRIUM_S3_PORT: 'many' })).toThrow(/S3_PORT/);
  });

  it('s3.enable starts the server with the other protocol listeners', async () => {
    listeners = await startProtocolListeners(s.core);
    const s3 = listeners.find((l) => l.url.startsWith('http://'));
    expect(s3).toBeDefined();
    await saveSettings(s, await s.login(), { s3_access_key_id: KEY_ID, s3_secret_access_key: SECRET, s3_buckets: JSON.stringify([{ name: 'root', path: '/' }]) });
    const c = client(`http://127.0.0.1:${s3!.port}`);
    expect((await c.send(new ListBucketsCommand({}))).Buckets?.map((b) => b.Name)).toEqual(['root']);
    c.destroy();
  });
});
