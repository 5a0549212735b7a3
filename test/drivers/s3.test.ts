import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { presignGet } from '../../src/drivers/s3/presign.js';
import { type ConformanceTarget, driverConformance } from './conformance.js';
import { BUCKET, resolveS3Localhost, S3_KEY, type S3Peer, startS3rver } from './s3-peer.js';

resolveS3Localhost();

const baseAddition = (endpoint: string) => ({
  bucket: BUCKET,
  endpoint,
  access_key_id: S3_KEY,
  secret_access_key: S3_KEY,
  root_folder_path: '/root',
  region: 'us-east-1',
});

/** A conformance target on s3rver with the storage root at `root/` of the bucket. */
async function s3Target(addition: (peer: S3Peer) => Record<string, unknown>, caps: ConformanceTarget['caps'] = {}): Promise<ConformanceTarget> {
  const peer = await startS3rver();
  await peer.put('outside-marker.txt', 'outside');
  return {
    // Proxied: s3rver answers suffix ranges (`bytes=-10`) wrongly; the presigned redirect is tested below.
    storage: { driver: 'S3', addition: addition(peer), web_proxy: true },
    seed: async (tree) => {
      const files = Object.entries(tree).filter(([k]) => !k.endsWith('/'));
      for (let i = 0; i < files.length; i += 32) await Promise.all(files.slice(i, i + 32).map(([k, v]) => peer.put(`root${k}`, v)));
    },
    peerRead: (rel) => peer.read(`root${rel}`),
    outsideMarker: 'outside-marker.txt',
    caps,
    teardown: () => peer.destroy(),
  };
}

// Listing v1 only: s3rver's v2 continuation tokens use DES, which Node 20's OpenSSL 3 refuses.
driverConformance('S3 against s3rver (path-style)', () =>
  s3Target((peer) => ({ ...baseAddition(`http://127.0.0.1:${peer.port}`), force_path_style: true, list_object_version: 'v1' })),
);

driverConformance('S3 against s3rver (virtual-host style)', () =>
  // The big folder is listed by the path-style run; addressing does not change listing.
  s3Target((peer) => ({ ...baseAddition(`http://s3.localhost:${peer.port}`), force_path_style: false, list_object_version: 'v1' }), { bigFolder: 0 }),
);

describe('S3 links and settings', () => {
  let peer: S3Peer;
  let s: TestServer;
  let token: string;
  const body = Buffer.from('0123456789abcdefghij');
  beforeAll(async () => {
    peer = await startS3rver();
    await peer.put('data/file.txt', body);
    s = await startServer(BACKENDS[0]!);
    token = await s.login();
  });
  afterAll(async () => {
    await s.destroy();
    await peer.destroy();
  });

  const create = (mount: string, addition: Record<string, unknown>) =>
    s.api('POST', '/api/admin/storage/create', { token, body: { mount_path: mount, driver: 'S3', addition: JSON.stringify(addition) } });
  const raw = (p: string) => s.inject({ method: 'GET', url: `/d${p}?sign=${encodeURIComponent(s.core.signer.sign(p))}` });

  it('redirects /d to a presigned URL that expires after sign_url_expire hours and serves ranges', async () => {
    const add = { ...baseAddition(`http://127.0.0.1:${peer.port}`), root_folder_path: '/data', force_path_style: true, sign_url_expire: 2 };
    expect((await create('/s3', add)).code).toBe(200);
    const res = await raw('/s3/file.txt');
    expect(res.statusCode).toBe(302);
    const url = new URL(String(res.headers.location));
    expect(url.host).toBe(`127.0.0.1:${peer.port}`);
    expect(url.pathname).toBe(`/${BUCKET}/data/file.txt`);
    expect(url.searchParams.get('X-Amz-Expires')).toBe('7200');
    const got = await fetch(url, { headers: { range: 'bytes=2-5' } });
    expect(got.status).toBe(206);
    expect(await got.text()).toBe('2345');
    const info = await s.api('POST', '/api/fs/get', { token, body: { path: '/s3/file.txt' } });
    expect(info.data.raw_url).toMatch(/X-Amz-Signature=[0-9a-f]{64}$/);
  });

  it('puts the custom host (without the bucket, with remove_bucket) into links, unsigned as OpenList', async () => {
    const add = { ...baseAddition(`http://127.0.0.1:${peer.port}`), root_folder_path: '/data', force_path_style: true, custom_host: 'https://cdn.example.test', remove_bucket: true };
    expect((await create('/cdn', add)).code).toBe(200);
    const url = new URL(String((await raw('/cdn/file.txt')).headers.location));
    expect(url.href).toBe('https://cdn.example.test/data/file.txt');
  });

  it('enable_custom_host_presign signs the link for the custom host itself', async () => {
    // s3.localhost reaches the same s3rver under another name
    const custom = `http://s3.localhost:${peer.port}`;
    const add = { ...baseAddition(`http://127.0.0.1:${peer.port}`), root_folder_path: '/data', force_path_style: true, custom_host: custom, enable_custom_host_presign: true };
    expect((await create('/cdn-signed', add)).code).toBe(200);
    const url = new URL(String((await raw('/cdn-signed/file.txt')).headers.location));
    expect(`${url.protocol}//${url.host}${url.pathname}`).toBe(`${custom}/${BUCKET}/data/file.txt`);
    expect(url.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
    const got = await fetch(url);
    expect(got.status).toBe(200);
    expect(Buffer.from(await got.arrayBuffer()).equals(body)).toBe(true);
    // (s3rver leaves the host out of its check, so a link signed for the endpoint would pass here too:
    // the signature's host is checked against the AWS algorithm by presign.ts's own test)
  });

  it('user_agent is the User-Agent of every request to the bucket', async () => {
    const agents: string[] = [];
    const relay = http.createServer((req, res) => {
      agents.push(String(req.headers['user-agent']));
      const up = http.request({ host: '127.0.0.1', port: peer.port, method: req.method, path: req.url, headers: req.headers }, (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      });
      req.pipe(up);
    });
    await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
    try {
      const port = (relay.address() as AddressInfo).port;
      const add = { ...baseAddition(`http://127.0.0.1:${port}`), root_folder_path: '/data', force_path_style: true, user_agent: 'AtriumTest/1.0 (+relay)' };
      expect((await create('/ua', add)).code).toBe(200);
      expect((await s.api('POST', '/api/fs/list', { token, body: { path: '/ua', refresh: true } })).data.content.map((o: { name: string }) => o.name)).toEqual(['file.txt']);
      expect(agents.length).toBeGreaterThanOrEqual(2);
      expect(new Set(agents)).toEqual(new Set(['AtriumTest/1.0 (+relay)']));
    } finally {
      relay.close();
    }
  });

  it('lists OpenList\'s items in driver info', async () => {
    const info = await s.api('GET', '/api/admin/driver/info?driver=S3', { token });
    const names = info.data.additional.map((i: { name: string }) => i.name);
    expect(names.indexOf('enable_custom_host_presign')).toBe(names.indexOf('custom_host') + 1);
    expect(names).toContain('user_agent');
  });

  it('a virtual-host style storage links to <bucket>.<endpoint host>', async () => {
    const add = { ...baseAddition(`http://s3.localhost:${peer.port}`), root_folder_path: '/data', add_filename_to_disposition: true };
    expect((await create('/vh', add)).code).toBe(200);
    const url = new URL(String((await raw('/vh/file.txt')).headers.location));
    expect(url.host).toBe(`${BUCKET}.s3.localhost:${peer.port}`);
    expect(url.pathname).toBe('/data/file.txt');
    const got = await fetch(url);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-disposition')).toBe("attachment; filename*=UTF-8''file.txt");
    expect(Buffer.from(await got.arrayBuffer()).equals(body)).toBe(true);
  });

  it('unknown credentials or a missing bucket leave the storage with an error status', async () => {
    const bad = await create('/bad', { ...baseAddition(`http://127.0.0.1:${peer.port}`), force_path_style: true, access_key_id: 'UNKNOWN' });
    expect(bad.code).toBe(500);
    expect(bad.message).toMatch(/^failed init storage but storage is already created: failed init storage: permission denied/);
    const none = await create('/none', { ...baseAddition(`http://127.0.0.1:${peer.port}`), force_path_style: true, bucket: 'no-such-bucket' });
    expect(none.message).toMatch(/bucket no-such-bucket not found/);
    const list = await s.api('GET', '/api/admin/storage/list', { token });
    const status = (m: string) => list.data.content.find((x: { mount_path: string }) => x.mount_path === m).status;
    expect(status('/bad')).toMatch(/permission denied/);
    expect(status('/s3')).toBe('work');
  });
});

describe('S3 presigning', () => {
  // s3rver does not check V4 signatures, so the signer is held to the example of AWS's documentation
  // ("Authenticating Requests: Using Query Parameters (AWS Signature Version 4)").
  it('matches the AWS documentation example', () => {
    const url = presignGet({
      url: new URL('https://examplebucket.s3.amazonaws.com/test.txt'),
      region: 'us-east-1',
      accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
      secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
      expiresSeconds: 86400,
      now: new Date('2013-05-24T00:00:00Z'),
    });
    expect(new URL(url).searchParams.get('X-Amz-Signature')).toBe('aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404');
    expect(url).toContain('X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request');
  });
});
