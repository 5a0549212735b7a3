// Area `s3` (issue 23): GetObject and PutObject of one big file and ListObjectsV2 of many keys
// against Atrium's S3 server, in the same run against Atrium's own `/d` and `PUT /api/fs/put`
// on the same files (target ≥ 0.9×) and against the s3rver test peer (target ≥ 2×). The big
// transfers use one client for every server — Node's http, S3 requests as SigV4 presigned URLs
// (UNSIGNED-PAYLOAD) made by the SDK's signer — so the figures compare servers, not clients;
// listings use @aws-sdk/client-s3. Bodies stream from disk and to nowhere.

import { createReadStream, mkdirSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { loadavg } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { createBigFile } from './lib/files.js';
import { freePort, makeTempDir, removeTempDir, rssOf, sampleRss, sleep, startProcess } from './lib/proc.js';
import { startAtrium } from './lib/servers.js';
import { fmtNum, GiB, median, MiB } from './lib/stats.js';
import type { AreaResult, BenchContext, BenchModule } from './lib/types.js';

const KEY = 'AKIABENCH000000000001';
const SECRET = 'bench-secret-0123456789abcdefghijklmnop';

const devNull = () => new Writable({ write: (_c, _e, done) => done() });

/** s3rver's only key pair is its built-in S3RVER / S3RVER. */
function s3client(endpoint: string, credentials = { accessKeyId: KEY, secretAccessKey: SECRET }): S3Client {
  return new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED', maxAttempts: 1 });
}

async function timed(fn: () => Promise<void>): Promise<number> {
  const t = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t) / 1e9;
}

function httpCall(url: string, opts: http.RequestOptions, body?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, opts, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function waitPort(port: number, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const ok = await httpCall(`http://127.0.0.1:${port}/`, { method: 'GET' }).then(() => true, () => false);
    if (ok) return;
    await sleep(100);
  }
  throw new Error(`port ${port} did not open`);
}

export const s3Bench: BenchModule = {
  area: 's3',
  title: 'S3 server: GetObject / PutObject / ListObjectsV2 vs /d, PUT /api/fs/put and s3rver',
  budgetMs: (quick) => (quick ? 5 : 15) * 60_000,
  onlyWhenNamed: true,
  async run(ctx: BenchContext, result: AreaResult) {
    if (ctx.atriumBuildError) throw new Error(ctx.atriumBuildError);
    const mib = Number(process.env.BENCH_FILE_MIB ?? '');
    const size = mib > 0 ? mib * MiB : ctx.quick ? 64 * MiB : GiB;
    const keys = ctx.quick ? 1000 : 10_000;
    const reps = Number(process.env.BENCH_REPS ?? '') || 2;
    const work = makeTempDir('atrium-bench-s3-');
    try {
      result.parameters = { file_bytes: size, list_keys: keys, repetitions: reps, client: 'node http (S3: presigned URLs) for transfers, @aws-sdk/client-s3 for listings' };
      result.environment = { loadavg_at_start: loadavg().map((v) => v.toFixed(2)).join(' ') };
      const src = path.join(work, 'source.bin');
      ctx.log(`writing a ${fmtNum(size / MiB, 0)} MiB source file`);
      await createBigFile(src, size, ctx.signal);

      const data = path.join(work, 'atrium');
      const s3Port = await freePort();
      mkdirSync(data, { recursive: true });
      writeFileSync(path.join(data, 'config.json'), JSON.stringify({ s3: { enable: true, port: s3Port } }));
      const atrium = await startAtrium(ctx.repoRoot, data, { signal: ctx.signal });
      const save = await httpCall(`${atrium.base}/api/admin/setting/save`, { method: 'POST', headers: { authorization: atrium.token, 'content-type': 'application/json' } }, JSON.stringify([
        { key: 's3_access_key_id', value: KEY },
        { key: 's3_secret_access_key', value: SECRET },
        { key: 's3_buckets', value: JSON.stringify([{ name: 'bench', path: '/' }]) },
      ]));
      if (save.status !== 200 || !save.text.includes('"code":200')) throw new Error(`setting save: ${save.text}`);
      const listDir = path.join(data, 'files', 'many');
      mkdirSync(listDir, { recursive: true });
      for (let i = 0; i < keys; i++) writeFileSync(path.join(listDir, `k${String(i).padStart(6, '0')}`), 'x');

      const peerDir = path.join(work, 's3rver');
      mkdirSync(peerDir);
      const peerPort = await freePort();
      const peerScript = `const S3rver=require('s3rver');new S3rver({port:${peerPort},address:'127.0.0.1',directory:${JSON.stringify(peerDir)},silent:true,configureBuckets:[{name:'bench'}]}).run().catch(e=>{console.error(e);process.exit(1)});`;
      const peer = startProcess('s3rver', process.execPath, ['-e', peerScript], { cwd: ctx.repoRoot });
      await waitPort(peerPort, 30_000);

      const atriumS3 = s3client(`http://127.0.0.1:${s3Port}`);
      const peerS3 = s3client(`http://127.0.0.1:${peerPort}`, { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' });
      const { SignatureV4 } = await import('@smithy/signature-v4');
      const { Sha256 } = await import('./lib/sha256.js');
      const presign = async (port: number, creds: { accessKeyId: string; secretAccessKey: string }, method: string, key: string) => {
        const signer = new SignatureV4({ service: 's3', region: 'us-east-1', credentials: creds, sha256: Sha256, uriEscapePath: false });
        const host = `127.0.0.1:${port}`;
        const signed = await signer.presign({ method, protocol: 'http:', hostname: '127.0.0.1', port, path: `/bench/${key}`, query: {}, headers: { host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' } }, { expiresIn: 3600, unsignableHeaders: new Set(['x-amz-content-sha256']) });
        return `http://${host}/bench/${key}?${new URLSearchParams(signed.query as Record<string, string>).toString()}`;
      };
      const atriumCreds = { accessKeyId: KEY, secretAccessKey: SECRET };
      const peerCreds = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
      const httpPut = (url: string, headers: Record<string, string>) =>
        new Promise<void>((resolve, reject) => {
          const req = http.request(url, { method: 'PUT', headers: { ...headers, 'content-length': String(size), 'content-type': 'application/octet-stream' } }, (res) => {
            res.resume();
            res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`PUT ${url.split('?')[0]}: ${res.statusCode}`))));
          });
          req.on('error', reject);
          createReadStream(src).pipe(req);
        });
      const httpGet = (url: string) =>
        new Promise<void>((resolve, reject) => {
          http.get(url, (res) => {
            if (res.statusCode !== 200) reject(new Error(`GET ${url.split('?')[0]}: ${res.statusCode}`));
            pipeline(res, devNull()).then(resolve, reject);
          }).on('error', reject);
        });
      const putS3 = async (port: number, creds: typeof atriumCreds, key: string) => {
        const url = await presign(port, creds, 'PUT', key);
        return timed(() => httpPut(url, {}));
      };
      const getS3 = async (port: number, creds: typeof atriumCreds, key: string) => {
        const url = await presign(port, creds, 'GET', key);
        return timed(() => httpGet(url));
      };
      const putNative = (name: string) => timed(() => httpPut(`${atrium.base}/api/fs/put`, { authorization: atrium.token, 'file-path': encodeURIComponent(`/${name}`) }));
      const getNative = (name: string) => timed(() => httpGet(`${atrium.base}/d/${name}`));
      const listAll = (c: S3Client) => timed(async () => {
        let token: string | undefined;
        let n = 0;
        do {
          const r = await c.send(new ListObjectsV2Command({ Bucket: 'bench', Prefix: 'many/', ContinuationToken: token }));
          n += r.KeyCount ?? 0;
          token = r.NextContinuationToken;
        } while (token);
        if (n !== keys) throw new Error(`listed ${n} keys, expected ${keys}`);
      });
      const listNative = () => timed(async () => {
        const r = await httpCall(`${atrium.base}/api/fs/list`, { method: 'POST', headers: { authorization: atrium.token, 'content-type': 'application/json' } }, JSON.stringify({ path: '/many', per_page: 0, refresh: false }));
        if (!r.text.includes(`"total":${keys}`)) throw new Error(`/api/fs/list: ${r.text.slice(0, 200)}`);
      });

      ctx.log(`uploading ${keys} small objects to s3rver`);
      for (let i = 0; i < keys; i += 32) {
        await Promise.all(Array.from({ length: Math.min(32, keys - i) }, (_, j) => peerS3.send(new PutObjectCommand({ Bucket: 'bench', Key: `many/k${String(i + j).padStart(6, '0')}`, Body: 'x' }))));
      }

      const idle = await rssOf(atrium.proc.pid);
      const rss = sampleRss(atrium.proc.pid, 100);
      const t: Record<string, number[]> = {};
      const add = (k: string, v: number) => (t[k] ??= []).push(v);
      for (let rep = 0; rep < reps; rep++) {
        ctx.log(`repetition ${rep + 1}/${reps}`);
        add('put-s3', await putS3(s3Port, atriumCreds, `big-s3-${rep}.bin`));
        add('put-native', await putNative(`big-native-${rep}.bin`));
        add('put-peer', await putS3(peerPort, peerCreds, `big-${rep}.bin`));
        add('get-s3', await getS3(s3Port, atriumCreds, `big-native-${rep}.bin`));
        add('get-native', await getNative(`big-native-${rep}.bin`));
        add('get-peer', await getS3(peerPort, peerCreds, `big-${rep}.bin`));
        add('list-s3', await listAll(atriumS3));
        add('list-native', await listNative());
        add('list-peer', await listAll(peerS3));
      }
      const { peak } = await rss.stop();
      if (statSync(path.join(data, 'files', 'big-s3-0.bin')).size !== size) throw new Error('the S3 upload has the wrong size');
      const mbps = (k: string) => size / 1e6 / median(t[k]!);
      const ms = (k: string) => median(t[k]!) * 1000;
      const label = `${fmtNum(size / MiB, 0)} MiB`;
      for (const op of ['put', 'get'] as const) {
        const name = op === 'put' ? 'PutObject' : 'GetObject';
        const native = op === 'put' ? 'PUT /api/fs/put' : '/d';
        result.summary.push({ benchmark: `${name} ${label} vs ${native}`, atrium: mbps(`${op}-s3`), peerName: native, peer: mbps(`${op}-native`), unit: 'MB/s', ratio: mbps(`${op}-s3`) / mbps(`${op}-native`), target: '≥ 0.90×', met: mbps(`${op}-s3`) / mbps(`${op}-native`) >= 0.9 });
        result.summary.push({ benchmark: `${name} ${label} vs s3rver`, atrium: mbps(`${op}-s3`), peerName: 's3rver', peer: mbps(`${op}-peer`), unit: 'MB/s', ratio: mbps(`${op}-s3`) / mbps(`${op}-peer`), target: '≥ 2.00×', met: mbps(`${op}-s3`) / mbps(`${op}-peer`) >= 2 });
      }
      // For times, lower is better: the ratio is the peer's time over Atrium's.
      result.summary.push({ benchmark: `ListObjectsV2 of ${keys} keys vs /api/fs/list`, atrium: ms('list-s3'), peerName: '/api/fs/list', peer: ms('list-native'), unit: 'ms', ratio: ms('list-native') / ms('list-s3'), target: '≥ 0.90× (time ratio)', met: ms('list-native') / ms('list-s3') >= 0.9 });
      result.summary.push({ benchmark: `ListObjectsV2 of ${keys} keys vs s3rver`, atrium: ms('list-s3'), peerName: 's3rver', peer: ms('list-peer'), unit: 'ms', ratio: ms('list-peer') / ms('list-s3'), target: '≥ 2.00× (time ratio)', met: ms('list-peer') / ms('list-s3') >= 2 });
      if (idle !== undefined) result.summary.push({ benchmark: 'atrium RSS before the transfers', atrium: idle / 1e6, unit: 'MB' });
      result.summary.push({ benchmark: 'atrium peak RSS during the transfers', atrium: peak / 1e6, unit: 'MB', target: 'flat (< idle + 100 MB)', met: idle === undefined ? null : peak - idle < 100e6 });
      result.raw = { seconds: t };
      result.environment.loadavg_at_end = loadavg().map((v) => v.toFixed(2)).join(' ');
      atriumS3.destroy();
      peerS3.destroy();
      await peer.stop();
      await atrium.stop();
    } finally {
      removeTempDir(work);
    }
  },
};
