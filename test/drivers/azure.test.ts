import { randomBytes } from 'node:crypto';
import { BlobServiceClient, type ContainerClient, StorageSharedKeyCredential } from '@azure/storage-blob';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountOf } from '../../src/drivers/azure-blob/index.js';
import { BACKENDS } from '../helpers/backends.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { driverConformance } from './conformance.js';
import { download, names, storageRow } from './mount.js';
import { AZURITE_ACCOUNT, AZURITE_KEY, type AzuritePeer, startAzurite } from './peers.js';

const CONTAINER = 'atrium';

/** The SDK on the emulator, to seed and inspect the container behind Atrium's back. */
async function containerOf(peer: AzuritePeer): Promise<ContainerClient> {
  const service = new BlobServiceClient(peer.endpoint, new StorageSharedKeyCredential(AZURITE_ACCOUNT, AZURITE_KEY));
  const c = service.getContainerClient(CONTAINER);
  await c.createIfNotExists();
  return c;
}

async function readBlob(c: ContainerClient, name: string): Promise<Buffer | undefined> {
  try {
    return await c.getBlobClient(name).downloadToBuffer();
  } catch {
    return undefined;
  }
}

const addition = (peer: AzuritePeer) => ({ endpoint: peer.endpoint, access_key: AZURITE_KEY, container_name: CONTAINER, root_folder_path: '/root' });

driverConformance('Azure Blob Storage against azurite', async () => {
  const peer = await startAzurite();
  const c = await containerOf(peer);
  await c.getBlockBlobClient('outside-marker.txt').upload('outside', 7);
  return {
    // Proxied: the SAS redirect is tested below.
    storage: { driver: 'Azure Blob Storage', addition: addition(peer), web_proxy: true },
    seed: async (tree) => {
      const files = Object.entries(tree).filter(([k]) => !k.endsWith('/'));
      for (let i = 0; i < files.length; i += 32) {
        await Promise.all(files.slice(i, i + 32).map(([k, v]) => c.getBlockBlobClient(`root${k}`).upload(v, Buffer.byteLength(v))));
      }
    },
    peerRead: (rel) => readBlob(c, `root${rel}`),
    outsideMarker: 'outside-marker.txt',
    teardown: () => peer.destroy(),
  };
});

describe('Azure Blob Storage links and settings', () => {
  let peer: AzuritePeer;
  let c: ContainerClient;
  let s: TestServer;
  let token: string;
  const body = randomBytes(20_000);
  beforeAll(async () => {
    peer = await startAzurite();
    c = await containerOf(peer);
    await c.getBlockBlobClient('data/file.bin').upload(body, body.length);
    s = await startServer(BACKENDS[0]!);
    token = await s.login();
  }, 60_000);
  afterAll(async () => {
    await s?.destroy();
    await peer?.destroy();
  });
  const create = (mount: string, add: Record<string, unknown>) => s.api('POST', '/api/admin/storage/create', { token, body: storageRow(mount, 'Azure Blob Storage', add) });

  it('reads the account from either endpoint style', () => {
    expect(accountOf(new URL('https://myacct.blob.core.windows.net/'))).toEqual({ account: 'myacct', pathStyle: false });
    expect(accountOf(new URL('http://127.0.0.1:10000/devstoreaccount1'))).toEqual({ account: 'devstoreaccount1', pathStyle: true });
  });

  it('redirects /d to a read-only SAS URL that expires after sign_url_expire hours and serves ranges', async () => {
    expect((await create('/az', { ...addition(peer), root_folder_path: '/data', sign_url_expire: 2 })).code).toBe(200);
    const res = await s.inject({ method: 'GET', url: `/d/az/file.bin?sign=${encodeURIComponent(s.core.signer.sign('/az/file.bin'))}` });
    expect(res.statusCode).toBe(302);
    const url = new URL(String(res.headers.location));
    expect(url.origin + url.pathname).toBe(`${peer.endpoint}/${CONTAINER}/data/file.bin`);
    expect(url.searchParams.get('sp')).toBe('r');
    const expiry = Date.parse(url.searchParams.get('se')!);
    expect(Math.abs(expiry - Date.now() - 2 * 3600_000)).toBeLessThan(120_000);
    const got = await fetch(url, { headers: { range: 'bytes=100-4099' } });
    expect(got.status).toBe(206);
    expect(Buffer.from(await got.arrayBuffer()).equals(body.subarray(100, 4100))).toBe(true);
    const tampered = new URL(url);
    tampered.searchParams.set('sp', 'rw');
    expect((await fetch(tampered)).status).toBe(403);
  });

  it('streams a big upload as blocks and copies server-side', async () => {
    const big = randomBytes(20 * 1024 * 1024 + 3);
    const up = await s.inject({ method: 'PUT', url: '/api/fs/put', payload: big, headers: { authorization: token, 'file-path': encodeURIComponent('/az/big.bin'), 'content-type': 'application/octet-stream' } });
    expect(up.json().code, up.json().message).toBe(200);
    const blocks = await c.getBlockBlobClient('data/big.bin').getBlockList('committed');
    expect(blocks.committedBlocks?.length).toBe(3);
    expect((await readBlob(c, 'data/big.bin'))!.equals(big)).toBe(true);
    expect((await s.api('POST', '/api/fs/mkdir', { token, body: { path: '/az/sub' } })).code).toBe(200);
    const copied = await s.api('POST', '/api/fs/copy', { token, body: { src_dir: '/az', dst_dir: '/az/sub', names: ['big.bin'] } });
    expect(copied.code, copied.message).toBe(200);
    // Server-side: the copy reports no task (no bytes went through Atrium).
    expect(copied.data?.tasks ?? []).toEqual([]);
    expect((await readBlob(c, 'data/sub/big.bin'))!.equals(big)).toBe(true);
    expect((await download(s, '/az/sub/big.bin', 'bytes=10485750-10485769')).body.equals(big.subarray(10485750, 10485770))).toBe(true);
    expect(await names(s, token, '/az')).toEqual(['sub', 'big.bin', 'file.bin']);
  });

  it('a wrong key or a missing container leaves the storage with an error status; a peer back up is used again', async () => {
    const bad = await create('/bad', { ...addition(peer), access_key: Buffer.from('wrong key').toString('base64') });
    expect(bad.code).toBe(500);
    expect(bad.message).toMatch(/^failed init storage but storage is already created: failed init storage: permission denied/);
    const none = await create('/none', { ...addition(peer), container_name: 'no-such-container' });
    expect(none.message).toMatch(/container no-such-container not found/);
    await peer.stop();
    const down = await s.api('POST', '/api/fs/list', { token, body: { path: '/az', refresh: true } });
    expect(down.code).toBe(500);
    await peer.start();
    expect(await names(s, token, '/az')).toContain('file.bin');
  }, 90_000);

  it('is listed by the driver endpoints under OpenList\'s name and items', async () => {
    const info = await s.api('GET', `/api/admin/driver/info?driver=${encodeURIComponent('Azure Blob Storage')}`, { token });
    expect(info.data.additional.map((i: { name: string }) => i.name)).toEqual(['root_folder_path', 'endpoint', 'access_key', 'container_name', 'sign_url_expire']);
    const byName = Object.fromEntries(info.data.additional.map((i: { name: string }) => [i.name, i]));
    expect(byName.sign_url_expire).toMatchObject({ type: 'number', default: '4' });
    expect(byName.endpoint.default).toBe('https://<accountname>.blob.core.windows.net/');
    expect(info.data.config).toMatchObject({ name: 'Azure Blob Storage', local_sort: true });
  });
});
