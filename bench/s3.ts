// Area `s3` (issue 23): GetObject and PutObject of one big file and ListObjectsV2 of many keys
// against Atrium's S3 server, in the same run against Atrium's own `/d` and `PUT /api/fs/put`
// on the same files (target ≥ 0.9×) and against the s3rver test peer (target ≥ 2×). Every
// request uses one client for every server — Node's http, S3 requests as SigV4 presigned URLs
// (UNSIGNED-PAYLOAD) made by the SDK's signer, /d by the signed link /api/fs/get gives — so the
// figures compare servers, not clients (the SDK's response parsing and checksums are left out;
// @aws-sdk/client-s3 only seeds s3rver). Bodies stream from disk and are counted to the last byte.

import { createReadStream, mkdirSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { loadavg } from 'node:os';
import path from 'node:path';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { createBigFile } from './lib/files.js';
import { freePort, groupCpuSeconds, makeTempDir, removeTempDir, rssOf, sampleRss, sleep, startProcess } from './lib/proc.js';
import { startAtrium } from './lib/servers.js';
import { fmtNum, GiB, median, MiB } from './lib/stats.js';
import type { AreaResult, BenchContext, BenchModule } from './lib/types.js';

const KEY = 'AKIABENCH000000000001';
const SECRET = 'bench-secret-0123456789abcdefghijklmnop';

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
    const keys = Number(process.env.BENCH_KEYS ?? '') || (ctx.quick ? 1000 : 10_000);
    const reps = Number(process.env.BENCH_REPS ?? '') || 2;
    const work = makeTempDir('atrium-bench-s3-');
    try {
      result.parameters = { file_bytes: size, list_keys: keys, repetitions: reps, client: 'node http for every request (S3: presigned URLs, /d: signed link)' };
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
      // s3rver encrypts its ListObjectsV2 continuation tokens with DES, which Node 20's OpenSSL 3
      // only offers through its legacy provider: without it every second page is a 500.
      const peer = startProcess('s3rver', process.execPath, ['--openssl-legacy-provider', '-e', peerScript], { cwd: ctx.repoRoot });
      await waitPort(peerPort, 30_000);

      const peerS3 = s3client(`http://127.0.0.1:${peerPort}`, { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' });
      const { SignatureV4 } = await import('@smithy/signature-v4');
      const { Sha256 } = await import('./lib/sha256.js');
      type Creds = { accessKeyId: string; secretAccessKey: string };
      const presign = async (port: number, creds: Creds, method: string, key: string, query: Record<string, string> = {}) => {
        const signer = new SignatureV4({ service: 's3', region: 'us-east-1', credentials: creds, sha256: Sha256, uriEscapePath: false });
        const host = `127.0.0.1:${port}`;
        const signed = await signer.presign({ method, protocol: 'http:', hostname: '127.0.0.1', port, path: `/bench/${key}`, query, headers: { host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' } }, { expiresIn: 3600, unsignableHeaders: new Set(['x-amz-content-sha256']) });
        return `http://${host}/bench/${key}?${new URLSearchParams(signed.query as Record<string, string>).toString()}`;
      };
      const atriumCreds = { accessKeyId: KEY, secretAccessKey: SECRET };
      const peerCreds = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
      const httpPut = (url: string, headers: Record<string, string>) =>
        new Promise<void>((resolve, reject) => {
          const req = http.request(url, { method: 'PUT', headers: { ...headers, 'content-length': String(size), 'content-type': 'application/octet-stream' } }, (res) => {
            let text = '';
            res.on('data', (c) => (text += c));
            res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`PUT ${url.split('?')[0]}: ${res.statusCode} ${text.slice(0, 200)}`))));
          });
          req.on('error', reject);
          createReadStream(src).pipe(req);
        });
      // Every download is counted to its last byte: an error page is never timed as a transfer.
      const httpGet = (url: string) =>
        new Promise<void>((resolve, reject) => {
          http.get(url, (res) => {
            let got = 0;
            res.on('data', (c: Buffer) => (got += c.length));
            res.on('error', reject);
            res.on('end', () => (res.statusCode === 200 && got === size ? resolve() : reject(new Error(`GET ${url.split('?')[0]}: ${res.statusCode}, ${got} of ${size} bytes`))));
          }).on('error', reject);
        });
      const putS3 = async (port: number, creds: Creds, key: string) => {
        const url = await presign(port, creds, 'PUT', key);
        return timed(() => httpPut(url, {}));
      };
      const getS3 = async (port: number, creds: Creds, key: string) => {
        const url = await presign(port, creds, 'GET', key);
        return timed(() => httpGet(url));
      };
      const putNative = (name: string) => timed(() => httpPut(`${atrium.base}/api/fs/put`, { authorization: atrium.token, 'file-path': encodeURIComponent(`/${name}`) }));
      // /d as a browser reaches it: the signed raw link /api/fs/get hands out (sign_all is on by default).
      const getNative = async (name: string) => {
        const r = await httpCall(`${atrium.base}/api/fs/get`, { method: 'POST', headers: { authorization: atrium.token, 'content-type': 'application/json' } }, JSON.stringify({ path: `/${name}`, password: '' }));
        const sign = (JSON.parse(r.text) as { data?: { sign?: string } }).data?.sign ?? '';
        return timed(() => httpGet(`${atrium.base}/d/${name}${sign ? `?sign=${encodeURIComponent(sign)}` : ''}`));
      };
      // Listings: the same raw HTTP client for the three servers (S3 pages by presigned URLs), the
      // bodies read whole and checked after the clock stops; the S3 pages follow their tokens.
      const listAll = async (port: number, creds: Creds) => {
        let seconds = 0;
        let token: string | undefined;
        let n = 0;
        do {
          const url = await presign(port, creds, 'GET', '', { 'list-type': '2', prefix: 'many/', ...(token ? { 'continuation-token': token } : {}) });
          let page = { status: 0, text: '' };
          seconds += await timed(async () => {
            page = await httpCall(url, { method: 'GET' });
          });
          if (page.status !== 200) throw new Error(`ListObjectsV2 on ${port}: ${page.status} ${page.text.slice(0, 200)}`);
          n += page.text.match(/<Key>/g)?.length ?? 0;
          token = /<NextContinuationToken>([^<]*)</.exec(page.text)?.[1]?.replace(/&amp;/g, '&');
        } while (token);
        if (n !== keys) throw new Error(`listed ${n} keys, expected ${keys}`);
        return seconds;
      };
      const listNative = async () => {
        let r = { status: 0, text: '' };
        const seconds = await timed(async () => {
          r = await httpCall(`${atrium.base}/api/fs/list`, { method: 'POST', headers: { authorization: atrium.token, 'content-type': 'application/json' } }, JSON.stringify({ path: '/many', per_page: 0, refresh: false }));
        });
        if (!r.text.includes(`"total":${keys}`)) throw new Error(`/api/fs/list: ${r.text.slice(0, 200)}`);
        return seconds;
      };

      // The native API in pages of 1000 entries: the same requests an S3 client makes (S3 pages hold at most 1000 keys).
      const listNativePaged = async () => {
        let seconds = 0;
        let n = 0;
        for (let page = 1; n < keys; page++) {
          let r = { status: 0, text: '' };
          seconds += await timed(async () => {
            r = await httpCall(`${atrium.base}/api/fs/list`, { method: 'POST', headers: { authorization: atrium.token, 'content-type': 'application/json' } }, JSON.stringify({ path: '/many', page, per_page: 1000, refresh: false }));
          });
          const got = r.text.match(/"name":/g)?.length ?? 0;
          if (!r.text.includes(`"total":${keys}`) || got === 0) throw new Error(`/api/fs/list page ${page}: ${r.text.slice(0, 200)}`);
          n += got;
        }
        if (n !== keys) throw new Error(`listed ${n} entries in pages, expected ${keys}`);
        return seconds;
      };

      ctx.log(`uploading ${keys} small objects to s3rver`);
      for (let i = 0; i < keys; i += 32) {
        await Promise.all(Array.from({ length: Math.min(32, keys - i) }, (_, j) => peerS3.send(new PutObjectCommand({ Bucket: 'bench', Key: `many/k${String(i + j).padStart(6, '0')}`, Body: 'x' }))));
      }

      const idle = await rssOf(atrium.proc.pid);
      const rss = sampleRss(atrium.proc.pid, 100);
      // Each operation: its wall time, and the CPU seconds the serving process spent on it (less
      // swayed by other load on a shared machine than the wall time).
      const t: Record<string, number[]> = {};
      const cpu: Record<string, number[]> = {};
      const measure = async (k: string, pid: number, fn: () => Promise<number>) => {
        const before = await groupCpuSeconds(pid);
        (t[k] ??= []).push(await fn());
        (cpu[k] ??= []).push((await groupCpuSeconds(pid)) - before);
      };
      const me = atrium.proc.pid;
      for (let rep = 0; rep < reps; rep++) {
        ctx.log(`repetition ${rep + 1}/${reps}`);
        await measure('put-s3', me, () => putS3(s3Port, atriumCreds, `big-s3-${rep}.bin`));
        await measure('put-native', me, () => putNative(`big-native-${rep}.bin`));
        await measure('put-peer', peer.pid, () => putS3(peerPort, peerCreds, `big-${rep}.bin`));
        await measure('get-s3', me, () => getS3(s3Port, atriumCreds, `big-native-${rep}.bin`));
        await measure('get-native', me, () => getNative(`big-native-${rep}.bin`));
        await measure('get-peer', peer.pid, () => getS3(peerPort, peerCreds, `big-${rep}.bin`));
        await measure('list-s3', me, () => listAll(s3Port, atriumCreds));
        await measure('list-native', me, () => listNative());
        await measure('list-native-paged', me, () => listNativePaged());
        await measure('list-peer', peer.pid, () => listAll(peerPort, peerCreds));
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
      const pages = Math.ceil(keys / 1000);
      const listRow = (peerKey: string, peerName: string, target: number) => ({
        benchmark: `ListObjectsV2 of ${keys} keys (${pages} page${pages > 1 ? 's' : ''}) vs ${peerName}`,
        atrium: ms('list-s3'),
        peerName,
        peer: ms(peerKey),
        unit: 'ms',
        ratio: ms(peerKey) / ms('list-s3'),
        target: `≥ ${target.toFixed(2)}× (time ratio)`,
        met: ms(peerKey) / ms('list-s3') >= target,
      });
      result.summary.push(listRow('list-native-paged', `/api/fs/list in pages of 1000`, 0.9));
      result.summary.push(listRow('list-native', '/api/fs/list in one request', 0.9));
      result.summary.push(listRow('list-peer', 's3rver', 2));
      const c = (k: string) => median(cpu[k]!);
      result.details.push({
        title: 'Server CPU seconds per operation (median; user + system of the serving process)',
        columns: ['operation', 'Atrium S3', 'Atrium native', 'S3 / native', 's3rver', 's3rver / Atrium S3'],
        rows: [
          [`PutObject ${label}`, c('put-s3'), c('put-native'), c('put-s3') / c('put-native'), c('put-peer'), c('put-peer') / c('put-s3')],
          [`GetObject ${label}`, c('get-s3'), c('get-native'), c('get-s3') / c('get-native'), c('get-peer'), c('get-peer') / c('get-s3')],
          [`ListObjectsV2 ${keys} keys (native: one request)`, c('list-s3'), c('list-native'), c('list-s3') / c('list-native'), c('list-peer'), c('list-peer') / c('list-s3')],
          [`ListObjectsV2 ${keys} keys (native: pages of 1000)`, c('list-s3'), c('list-native-paged'), c('list-s3') / c('list-native-paged'), c('list-peer'), c('list-peer') / c('list-s3')],
        ].map((r) => r.map((v) => (typeof v === 'number' ? Number(v.toFixed(3)) : v))),
      });
      if (idle !== undefined) result.summary.push({ benchmark: 'atrium RSS before the transfers', atrium: idle / 1e6, unit: 'MB' });
      result.summary.push({ benchmark: 'atrium peak RSS during the transfers', atrium: peak / 1e6, unit: 'MB', target: 'flat (< idle + 100 MB)', met: idle === undefined ? null : peak - idle < 100e6 });
      result.raw = { seconds: t, cpu_seconds: cpu };
      result.environment.loadavg_at_end = loadavg().map((v) => v.toFixed(2)).join(' ');
      peerS3.destroy();
      await peer.stop();
      await atrium.stop();
    } finally {
      removeTempDir(work);
    }
  },
};
