// Area `s3` (issue 23): GetObject and PutObject of one big file and ListObjectsV2 of many keys
// against Atrium's S3 server, in the same run against Atrium's own `/d` and `PUT /api/fs/put`
// on the same files (target ≥ 0.9×) and against the s3rver test peer (target ≥ 2×). The listing
// is timed both in one request (max-keys=10000, against /api/fs/list in one request) and in S3's
// default pages of 1000 (against /api/fs/list in pages of 1000). Every
// request of a kind uses one client for every server, so the figures compare servers, not
// clients. Transfers: curl (BENCH_CLIENT=curl, the default), S3 requests as SigV4 presigned URLs
// (UNSIGNED-PAYLOAD) made by the SDK's signer, /d by the signed link /api/fs/get gives, uploads
// by `curl -T` as bench/write.ts. Node's http client (BENCH_CLIENT=node) streams 1 GiB at a
// fraction of curl's rate and spends more CPU per GiB than the servers do, so with it the
// transfers measure the client; the client's CPU seconds are reported beside the servers' to
// show which side bounds a figure. Listings: Node's http in this process (small bodies, where a
// curl process per page would cost more than the page). The SDK's response parsing and checksums
// are left out (@aws-sdk/client-s3 only seeds s3rver). Every body is counted to the last byte.

import { createReadStream, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { loadavg } from 'node:os';
import path from 'node:path';
import { DeleteObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { createBigFile } from './lib/files.js';
import { freePort, groupCpuSeconds, makeTempDir, removeTempDir, rssOf, runCommand, sampleRss, sleep, startProcess } from './lib/proc.js';
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

export type S3BenchClient = 'curl' | 'node';
const clientKind = (process.env.BENCH_CLIENT ?? 'curl') as S3BenchClient;

async function curlVersion(): Promise<string> {
  const r = await runCommand('curl', 'curl', ['--version'], { timeoutMs: 5000 }).catch(() => undefined);
  const v = r?.output.split(' ').slice(0, 2).join(' ');
  if (!v?.startsWith('curl')) throw new Error('curl is missing: run bench/setup.sh or set BENCH_CLIENT=node');
  return v;
}

/** One transfer: its seconds as the client timed it, and the client's own CPU seconds (curl: the curl process's). */
interface Transfer {
  seconds: number;
  clientCpu?: number;
}

/**
 * One curl transfer (`-T file` for a PUT, to /dev/null for a GET) run by bash so that its CPU
 * seconds come back too (`times`: user and system of the finished child). The time is curl's own
 * `time_total` (connect, send or receive, the answer; no process start-up), as bench/write.ts.
 * Fails unless the answer is 200 with every byte sent or received (and, for the native PUT, the
 * API's code 200), so an error page is never timed as a transfer.
 */
function curlTransfer(method: 'PUT' | 'GET', url: string, headers: Record<string, string>, file: string | undefined, size: number): Promise<Transfer> {
  const args = ['-sS', '--max-time', '600', '-w', '\\n@@curl %{http_code} %{size_upload} %{size_download} %{time_total}\\n'];
  if (method === 'PUT') args.push('-T', file!, '-H', 'content-type: application/octet-stream');
  else args.push('-o', '/dev/null');
  for (const [k, v] of Object.entries(headers)) args.push('-H', `${k}: ${v}`);
  args.push(url);
  const p = startProcess('curl', 'bash', ['-c', 'curl "$@"; rc=$?; echo "@@times"; times; exit $rc', 'bash', ...args]);
  return p.exited.then(async (code) => {
    const out = p.output();
    await p.stop();
    const m = /@@curl (\d{3}) (\d+) (\d+) ([\d.]+)\s*@@times\s+\S+ \S+\s+(\d+)m([\d.]+)s (\d+)m([\d.]+)s/.exec(out);
    if (code !== 0 || !m) throw new Error(`curl ${method} ${url.split('?')[0]} exited ${code}: ${out.trim().slice(-300)}`);
    const body = out.slice(0, m.index);
    const moved = Number(method === 'PUT' ? m[2] : m[3]);
    if (m[1] !== '200' || moved !== size || (body.includes('"code"') && !body.includes('"code":200'))) {
      throw new Error(`${method} ${url.split('?')[0]}: ${m[1]}, ${moved} of ${size} bytes ${body.trim().slice(0, 200)}`);
    }
    return { seconds: Number(m[4]), clientCpu: Number(m[5]) * 60 + Number(m[6]) + Number(m[7]) * 60 + Number(m[8]) };
  });
}

/** Node's http client: the file piped in (createReadStream's 64 KiB reads), timed here. */
function nodePut(url: string, headers: Record<string, string>, file: string, size: number): Promise<Transfer> {
  const t = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'PUT', headers: { ...headers, 'content-length': String(size), 'content-type': 'application/octet-stream' } }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => (res.statusCode === 200 && (!text.includes('"code"') || text.includes('"code":200')) ? resolve({ seconds: Number(process.hrtime.bigint() - t) / 1e9 }) : reject(new Error(`PUT ${url.split('?')[0]}: ${res.statusCode} ${text.slice(0, 200)}`))));
    });
    req.on('error', reject);
    createReadStream(file).pipe(req);
  });
}

/** Node's http.get, every byte counted. */
function nodeGet(url: string, size: number): Promise<Transfer> {
  const t = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    http.get(url, (res) => {
      let got = 0;
      res.on('data', (c: Buffer) => (got += c.length));
      res.on('error', reject);
      res.on('end', () => (res.statusCode === 200 && got === size ? resolve({ seconds: Number(process.hrtime.bigint() - t) / 1e9 }) : reject(new Error(`GET ${url.split('?')[0]}: ${res.statusCode}, ${got} of ${size} bytes`))));
    }).on('error', reject);
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
    const reps = Number(process.env.BENCH_REPS ?? '') || 3;
    // The largest page Atrium's S3 server gives (max-keys above it is clamped): the keys in as few requests as it allows.
    const bigPage = Math.min(keys, 10_000);
    const bigPages = Math.ceil(keys / bigPage);
    if (clientKind !== 'curl' && clientKind !== 'node') throw new Error(`BENCH_CLIENT must be curl or node, got ${String(clientKind)}`);
    const work = makeTempDir('atrium-bench-s3-');
    try {
      result.parameters = { file_bytes: size, list_keys: keys, repetitions: reps, client: clientKind === 'curl' ? `transfers: ${await curlVersion()} for every server (S3: presigned URLs, /d: signed link, PUT: curl -T); listings: node http` : 'node http for every request (S3: presigned URLs, /d: signed link)' };
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
      // The transfer client (BENCH_CLIENT, default curl): one for every server. Node's http client
      // streams 1 GiB at 250–500 MB/s and spends more CPU on it than the servers do, so its
      // figures measure the client; curl moves the same bytes at several times that, and the
      // servers' differences show. Each transfer's client CPU seconds are kept beside the servers'.
      const putFile = (url: string, headers: Record<string, string>) =>
        clientKind === 'curl' ? curlTransfer('PUT', url, headers, src, size) : nodePut(url, headers, src, size);
      const getFile = (url: string) => (clientKind === 'curl' ? curlTransfer('GET', url, {}, undefined, size) : nodeGet(url, size));
      const putS3 = async (port: number, creds: Creds, key: string) => putFile(await presign(port, creds, 'PUT', key), {});
      const getS3 = async (port: number, creds: Creds, key: string) => getFile(await presign(port, creds, 'GET', key));
      const putNative = (name: string) => putFile(`${atrium.base}/api/fs/put`, { authorization: atrium.token, 'file-path': encodeURIComponent(`/${name}`) });
      // /d as a browser reaches it: the signed raw link /api/fs/get hands out (sign_all is on by default).
      const getNative = async (name: string) => {
        const r = await httpCall(`${atrium.base}/api/fs/get`, { method: 'POST', headers: { authorization: atrium.token, 'content-type': 'application/json' } }, JSON.stringify({ path: `/${name}`, password: '' }));
        const sign = (JSON.parse(r.text) as { data?: { sign?: string } }).data?.sign ?? '';
        return getFile(`${atrium.base}/d/${name}${sign ? `?sign=${encodeURIComponent(sign)}` : ''}`);
      };
      // Listings: the same raw HTTP client for the three servers (S3 pages by presigned URLs), the
      // bodies read whole and checked after the clock stops; the S3 pages follow their tokens.
      // `maxKeys` asks for pages of that many keys (Atrium honours up to 10 000; without it S3's
      // default of 1 000), and the number of pages it took is checked against it.
      const listAll = async (port: number, creds: Creds, maxKeys?: number) => {
        let seconds = 0;
        let token: string | undefined;
        let n = 0;
        let requests = 0;
        do {
          const url = await presign(port, creds, 'GET', '', { 'list-type': '2', prefix: 'many/', ...(maxKeys ? { 'max-keys': String(maxKeys) } : {}), ...(token ? { 'continuation-token': token } : {}) });
          requests++;
          let page = { status: 0, text: '' };
          seconds += await timed(async () => {
            page = await httpCall(url, { method: 'GET' });
          });
          if (page.status !== 200) throw new Error(`ListObjectsV2 on ${port}: ${page.status} ${page.text.slice(0, 200)}`);
          n += page.text.match(/<Key>/g)?.length ?? 0;
          token = /<NextContinuationToken>([^<]*)</.exec(page.text)?.[1]?.replace(/&amp;/g, '&');
        } while (token);
        if (n !== keys) throw new Error(`listed ${n} keys, expected ${keys}`);
        const expected = Math.ceil(keys / (maxKeys ?? 1000));
        if (requests !== expected) throw new Error(`listed ${keys} keys in ${requests} requests, expected ${expected}`);
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

      // The native API in pages of 1000 entries: the same requests an S3 client makes with S3's default page size.
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

      // One untimed listing of each kind first: the folder is read from disk and the code warmed
      // once, so no side's median carries the cold start another side paid for.
      await listAll(s3Port, atriumCreds);
      await listAll(s3Port, atriumCreds, bigPage);
      await listNative();
      await listNativePaged();
      await listAll(peerPort, peerCreds);

      const idle = await rssOf(atrium.proc.pid);
      const rss = sampleRss(atrium.proc.pid, 100);
      // Each operation: its wall time, and the CPU seconds the serving process spent on it (less
      // swayed by other load on a shared machine than the wall time).
      // The client's CPU seconds: this process's own (Node's http client, the listings) plus, for
      // a curl transfer, the curl process's.
      const t: Record<string, number[]> = {};
      const cpu: Record<string, number[]> = {};
      const clientCpu: Record<string, number[]> = {};
      const measure = async (k: string, pid: number, fn: () => Promise<number | Transfer>) => {
        const before = await groupCpuSeconds(pid);
        const mine = process.cpuUsage();
        const r = await fn();
        const own = process.cpuUsage(mine);
        const got = typeof r === 'number' ? { seconds: r } : r;
        (t[k] ??= []).push(got.seconds);
        (cpu[k] ??= []).push((await groupCpuSeconds(pid)) - before);
        (clientCpu[k] ??= []).push((own.user + own.system) / 1e6 + (got.clientCpu ?? 0));
      };
      const me = atrium.proc.pid;
      for (let rep = 0; rep < reps; rep++) {
        ctx.log(`repetition ${rep + 1}/${reps}`);
        // Each upload starts with the disk's dirty pages written out (an untimed sync), and the
        // two Atrium routes take turns going first, so neither inherits the other's writeback.
        const puts: Array<[string, number, () => Promise<Transfer>]> = [
          ['put-s3', me, () => putS3(s3Port, atriumCreds, `big-s3-${rep}.bin`)],
          ['put-native', me, () => putNative(`big-native-${rep}.bin`)],
        ];
        if (rep % 2 === 1) puts.reverse();
        puts.push(['put-peer', peer.pid, () => putS3(peerPort, peerCreds, `big-${rep}.bin`)]);
        for (const [k, pid, fn] of puts) {
          await runCommand('sync', 'sync', [], { timeoutMs: 120_000 });
          await measure(k, pid, fn);
        }
        const gets: Array<[string, () => Promise<Transfer>]> = [
          ['get-s3', () => getS3(s3Port, atriumCreds, `big-native-${rep}.bin`)],
          ['get-native', () => getNative(`big-native-${rep}.bin`)],
        ];
        if (rep % 2 === 1) gets.reverse();
        for (const [k, fn] of gets) await measure(k, me, fn);
        await measure('get-peer', peer.pid, () => getS3(peerPort, peerCreds, `big-${rep}.bin`));
        await measure('list-s3', me, () => listAll(s3Port, atriumCreds));
        await measure('list-s3-one', me, () => listAll(s3Port, atriumCreds, bigPage));
        await measure('list-native', me, () => listNative());
        await measure('list-native-paged', me, () => listNativePaged());
        await measure('list-peer', peer.pid, () => listAll(peerPort, peerCreds));
        // The repetition's objects go (untimed): each repetition writes into as much free page
        // cache as the first, instead of the later ones reclaiming the earlier ones' pages.
        for (const name of [`big-s3-${rep}.bin`, `big-native-${rep}.bin`]) {
          const file = path.join(data, 'files', name);
          if (statSync(file).size !== size) throw new Error(`${name} has the wrong size`);
          rmSync(file);
        }
        await peerS3.send(new DeleteObjectCommand({ Bucket: 'bench', Key: `big-${rep}.bin` }));
      }
      const { peak } = await rss.stop();
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
      const paged = `ListObjectsV2 of ${keys} keys (${pages} page${pages > 1 ? 's' : ''} of S3's default 1000)`;
      const listRow = (benchmark: string, s3Key: string, peerKey: string, peerName: string, target?: number) => ({
        benchmark: `${benchmark} vs ${peerName}`,
        atrium: ms(s3Key),
        peerName,
        peer: ms(peerKey),
        unit: 'ms',
        ratio: ms(peerKey) / ms(s3Key),
        target: target === undefined ? '' : `≥ ${target.toFixed(2)}× (time ratio)`,
        met: target === undefined ? null : ms(peerKey) / ms(s3Key) >= target,
      });
      // Like for like: one request against one request (max-keys=keys, which Atrium honours up to
      // 10 000), and pages of 1000 against pages of 1000. The default pages against the native
      // single request are shown for information only (ten round trips against one, no target).
      result.summary.push(listRow(`ListObjectsV2 of ${keys} keys with max-keys=${bigPage} (${bigPages === 1 ? 'one request' : `${bigPages} requests`})`, 'list-s3-one', 'list-native', '/api/fs/list in one request', 0.9));
      result.summary.push(listRow(paged, 'list-s3', 'list-native-paged', '/api/fs/list in pages of 1000', 0.9));
      result.summary.push(listRow(paged, 'list-s3', 'list-native', '/api/fs/list in one request (information: pages against one request)'));
      result.summary.push(listRow(paged, 'list-s3', 'list-peer', 's3rver', 2));
      const c = (k: string) => median(cpu[k]!);
      result.details.push({
        title: 'Server CPU seconds per operation (median; user + system of the serving process)',
        columns: ['operation', 'Atrium S3', 'Atrium native', 'S3 / native', 's3rver', 's3rver / Atrium S3'],
        rows: [
          [`PutObject ${label}`, c('put-s3'), c('put-native'), c('put-s3') / c('put-native'), c('put-peer'), c('put-peer') / c('put-s3')],
          [`GetObject ${label}`, c('get-s3'), c('get-native'), c('get-s3') / c('get-native'), c('get-peer'), c('get-peer') / c('get-s3')],
          [`ListObjectsV2 ${keys} keys, max-keys=${bigPage} (native: one request)`, c('list-s3-one'), c('list-native'), c('list-s3-one') / c('list-native'), null, null],
          [`ListObjectsV2 ${keys} keys, pages of 1000 (native: pages of 1000)`, c('list-s3'), c('list-native-paged'), c('list-s3') / c('list-native-paged'), c('list-peer'), c('list-peer') / c('list-s3')],
        ].map((r) => r.map((v) => (typeof v === 'number' ? Number(v.toFixed(3)) : v))),
      });
      const cc = (k: string) => median(clientCpu[k]!);
      result.details.push({
        title: `Client CPU seconds per operation (median; ${clientKind === 'curl' ? 'the curl process for transfers, this process for listings' : 'this process: Node http'}) against the wall time`,
        columns: ['operation', 'Atrium S3 client CPU', 'wall s', 'native client CPU', 'wall s', 's3rver client CPU', 'wall s'],
        rows: [
          [`PutObject ${label}`, cc('put-s3'), median(t['put-s3']!), cc('put-native'), median(t['put-native']!), cc('put-peer'), median(t['put-peer']!)],
          [`GetObject ${label}`, cc('get-s3'), median(t['get-s3']!), cc('get-native'), median(t['get-native']!), cc('get-peer'), median(t['get-peer']!)],
          [`ListObjectsV2 ${keys} keys, max-keys=${bigPage} (native: one request)`, cc('list-s3-one'), median(t['list-s3-one']!), cc('list-native'), median(t['list-native']!), null, null],
          [`ListObjectsV2 ${keys} keys, pages of 1000 (native: pages of 1000)`, cc('list-s3'), median(t['list-s3']!), cc('list-native-paged'), median(t['list-native-paged']!), cc('list-peer'), median(t['list-peer']!)],
        ].map((r) => r.map((v) => (typeof v === 'number' ? Number(v.toFixed(3)) : v))),
      });
      if (idle !== undefined) result.summary.push({ benchmark: 'atrium RSS before the transfers', atrium: idle / 1e6, unit: 'MB' });
      result.summary.push({ benchmark: 'atrium peak RSS during the transfers', atrium: peak / 1e6, unit: 'MB', target: 'flat (< idle + 100 MB)', met: idle === undefined ? null : peak - idle < 100e6 });
      result.raw = { seconds: t, cpu_seconds: cpu, client_cpu_seconds: clientCpu };
      result.environment.loadavg_at_end = loadavg().map((v) => v.toFixed(2)).join(' ');
      peerS3.destroy();
      await peer.stop();
      await atrium.stop();
    } finally {
      removeTempDir(work);
    }
  },
};
