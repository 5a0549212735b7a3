// Area `drivers`: the S3, SFTP, SMB and Azure Blob Storage drivers against rclone on the same
// peers (issue: "listing 10 000 objects and streaming a 1 GiB object through /d (proxy) vs
// `rclone cat` of the same object in one run; target at least rclone's throughput, flat memory").
//
// Peers, on loopback: s3rver (in this process), OpenSSH's sshd and Samba's smbd (private
// configs, the test suite's helpers; Samba with its default ntlmv2-only) and azurite (rclone's
// azureblob backend talks to the emulator directly). Atrium runs as its own process with one
// storage per driver (S3 and Azure with web_proxy on, so /d streams through Atrium). For each driver:
//   - a cold listing of 10 000 entries (`/api/fs/list` with refresh) vs `rclone lsjson`;
//   - the large object through `/d` with curl vs `rclone cat … > /dev/null`, Atrium's RSS sampled
//     during the download.
// BENCH_FILE_MIB sets the object size (default 1024, quick 64); BENCH_LIST_SIZES the entry count.

import { randomBytes } from 'node:crypto';
import { createReadStream, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Upload } from '@aws-sdk/lib-storage';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { BlobServiceClient, ContainerSASPermissions, StorageSharedKeyCredential } from '@azure/storage-blob';
import { AZURITE_ACCOUNT, AZURITE_KEY, type AzuritePeer, type SambaPeer, startAzurite, startSamba, startSshd, type SshdPeer } from '../test/drivers/peers.js';
import { BUCKET, S3_KEY, type S3Peer, startS3rver } from '../test/drivers/s3-peer.js';
import { createBigFile } from './lib/files.js';
import { apiCall, parallelDownload } from './lib/http.js';
import { makeTempDir, removeTempDir, rssOf, sampleRss, timedBash } from './lib/proc.js';
import { startAtrium, versionOf, which, type Atrium } from './lib/servers.js';
import { fmtBytes, fmtNum, median, MiB, nowMs } from './lib/stats.js';
import { errorText } from './lib/report.js';
import type { AreaResult, BenchContext, BenchModule, SummaryRow } from './lib/types.js';

const LIST_RUNS = 3;
const DOWNLOAD_REPS = 2;

interface Subject {
  driver: 'S3' | 'SFTP' | 'SMB' | 'Azure';
  mount: string;
  /** rclone remote spec (on-the-fly remote from the environment) and its env. */
  remote: string;
  env: Record<string, string>;
}

const errMsg = (err: unknown) => errorText(err, 4);

async function seedS3(peer: S3Peer, count: number, bigFile: string, signal: AbortSignal): Promise<void> {
  const keys = Array.from({ length: count }, (_, i) => `list/f-${String(i).padStart(6, '0')}.txt`);
  for (let i = 0; i < keys.length; i += 64) {
    if (signal.aborted) throw signal.reason;
    await Promise.all(keys.slice(i, i + 64).map((Key) => peer.sdk.send(new PutObjectCommand({ Bucket: BUCKET, Key, Body: Key }))));
  }
  await new Upload({ client: peer.sdk, params: { Bucket: BUCKET, Key: 'big/big.bin', Body: createReadStream(bigFile) }, partSize: 16 * MiB, queueSize: 2 }).done();
}

async function seedSftp(peer: SshdPeer, count: number, bigFile: string): Promise<void> {
  const list = path.join(peer.files, 'root/list');
  mkdirSync(list, { recursive: true });
  for (let i = 0; i < count; i++) writeFileSync(path.join(list, `f-${String(i).padStart(6, '0')}.txt`), `f-${i}`);
  mkdirSync(path.join(peer.files, 'root/big'), { recursive: true });
  // A hard link: the same bytes without a second copy.
  await timedBash('link', 'ln "$1" "$2" && chown -R nobody: "$3"', [bigFile, path.join(peer.files, 'root/big/big.bin'), path.join(peer.files, 'root')]);
}

async function seedSamba(peer: SambaPeer, count: number, bigFile: string): Promise<void> {
  const list = path.join(peer.files, 'root/list');
  mkdirSync(list, { recursive: true });
  for (let i = 0; i < count; i++) writeFileSync(path.join(list, `f-${String(i).padStart(6, '0')}.txt`), `f-${i}`);
  mkdirSync(path.join(peer.files, 'root/big'), { recursive: true });
  await timedBash('link', 'ln "$1" "$2" && chown -R nobody: "$3"', [bigFile, path.join(peer.files, 'root/big/big.bin'), path.join(peer.files, 'root')]);
}

const AZURE_CONTAINER = 'bench';

/** Seeds the container; returns a container SAS URL for rclone (whose 1.60 `endpoint` is a DNS suffix, not a URL). */
async function seedAzure(peer: AzuritePeer, count: number, bigFile: string, signal: AbortSignal): Promise<string> {
  const c = new BlobServiceClient(peer.endpoint, new StorageSharedKeyCredential(AZURITE_ACCOUNT, AZURITE_KEY)).getContainerClient(AZURE_CONTAINER);
  await c.createIfNotExists();
  for (let i = 0; i < count; i += 64) {
    if (signal.aborted) throw signal.reason;
    await Promise.all(
      Array.from({ length: Math.min(64, count - i) }, (_, j) => {
        const name = `list/f-${String(i + j).padStart(6, '0')}.txt`;
        return c.getBlockBlobClient(name).upload(name, name.length);
      }),
    );
  }
  await c.getBlockBlobClient('big/big.bin').uploadStream(createReadStream(bigFile), 8 * MiB, 4);
  return c.generateSasUrl({ permissions: ContainerSASPermissions.parse('rl'), expiresOn: new Date(Date.now() + 6 * 3600_000) });
}

async function run(ctx: BenchContext, result: AreaResult): Promise<void> {
  const { signal } = ctx;
  const count = Number(process.env.BENCH_LIST_SIZES?.split(',')[0] ?? 10_000);
  const fileSize = Number(process.env.BENCH_FILE_MIB ?? (ctx.quick ? 64 : 1024)) * MiB;
  result.parameters = { entries: count, file_size: fmtBytes(fileSize), list_runs: LIST_RUNS, download_reps: DOWNLOAD_REPS };
  if (ctx.atriumBuildError) throw new Error(ctx.atriumBuildError);
  if (!(await which('rclone'))) throw new Error('rclone is not installed (bash bench/setup.sh)');
  result.environment.rclone = await versionOf('rclone', ['version']);

  const work = makeTempDir('atrium-bench-drivers-');
  const bigFile = path.join(work, 'big.bin');
  let atrium: Atrium | undefined;
  let s3: S3Peer | undefined;
  let sshd: SshdPeer | undefined;
  let samba: SambaPeer | undefined;
  let azurite: AzuritePeer | undefined;
  try {
    ctx.log(`creating a ${fmtBytes(fileSize)} object and ${count} small ones on s3rver and sshd`);
    await createBigFile(bigFile, fileSize, signal);
    [s3, sshd] = await Promise.all([startS3rver(), startSshd()]);
    await seedSftp(sshd, count, bigFile);
    await seedS3(s3, count, bigFile, signal);
    // SMB needs Debian's samba (and root, to switch users); the row is left out without it.
    const haveSamba = (await which('smbd')) && process.getuid?.() === 0;
    if (haveSamba) {
      samba = await startSamba();
      await seedSamba(samba, count, bigFile);
    } else ctx.log('smbd is not installed (or not root): no SMB row');
    azurite = await startAzurite();
    const azureSas = await seedAzure(azurite, count, bigFile, signal);
    const keyFile = path.join(work, 'sftp-key');
    writeFileSync(keyFile, sshd.privateKey, { mode: 0o600 });

    const password = randomBytes(9).toString('base64url');
    atrium = await startAtrium(ctx.repoRoot, path.join(work, 'data'), { password, signal });
    const a = atrium;
    const create = (body: Record<string, unknown>) => apiCall(a.base, '/api/admin/storage/create', { token: a.token, body });
    await create({
      mount_path: '/s3',
      driver: 'S3',
      web_proxy: true,
      cache_expiration: 0,
      addition: JSON.stringify({ endpoint: `http://127.0.0.1:${s3.port}`, bucket: BUCKET, access_key_id: S3_KEY, secret_access_key: S3_KEY, force_path_style: true, region: 'us-east-1' }),
    });
    await create({
      mount_path: '/sftp',
      driver: 'SFTP',
      cache_expiration: 0,
      addition: JSON.stringify({ address: `127.0.0.1:${sshd.port}`, username: sshd.user, private_key: sshd.privateKey, root_folder_path: path.join(sshd.files, 'root') }),
    });

    if (samba) {
      await create({
        mount_path: '/smb',
        driver: 'SMB',
        cache_expiration: 0,
        addition: JSON.stringify({ address: `127.0.0.1:${samba.port}`, username: samba.user, password: samba.password, share_name: samba.share, root_folder_path: '/root' }),
      });
    }
    await create({
      mount_path: '/azure',
      driver: 'Azure Blob Storage',
      web_proxy: true,
      cache_expiration: 0,
      addition: JSON.stringify({ endpoint: azurite.endpoint, access_key: AZURITE_KEY, container_name: AZURE_CONTAINER, root_folder_path: '/' }),
    });

    const subjects: Subject[] = [
      {
        driver: 'S3',
        mount: '/s3',
        remote: `bench:${BUCKET}`,
        env: {
          RCLONE_CONFIG_BENCH_TYPE: 's3',
          RCLONE_CONFIG_BENCH_PROVIDER: 'Other',
          RCLONE_CONFIG_BENCH_ACCESS_KEY_ID: S3_KEY,
          RCLONE_CONFIG_BENCH_SECRET_ACCESS_KEY: S3_KEY,
          RCLONE_CONFIG_BENCH_ENDPOINT: `http://127.0.0.1:${s3.port}`,
          RCLONE_CONFIG_BENCH_FORCE_PATH_STYLE: 'true',
          // s3rver's v2 continuation tokens use DES, which OpenSSL 3 refuses.
          RCLONE_CONFIG_BENCH_LIST_VERSION: '1',
        },
      },
      {
        driver: 'SFTP',
        mount: '/sftp',
        remote: `bench:${path.join(sshd.files, 'root')}`,
        env: {
          RCLONE_CONFIG_BENCH_TYPE: 'sftp',
          RCLONE_CONFIG_BENCH_HOST: '127.0.0.1',
          RCLONE_CONFIG_BENCH_PORT: String(sshd.port),
          RCLONE_CONFIG_BENCH_USER: sshd.user,
          RCLONE_CONFIG_BENCH_KEY_FILE: keyFile,
          RCLONE_CONFIG_BENCH_KNOWN_HOSTS_FILE: '',
        },
      },
      {
        driver: 'Azure',
        mount: '/azure',
        remote: `bench:${AZURE_CONTAINER}`,
        env: { RCLONE_CONFIG_BENCH_TYPE: 'azureblob', RCLONE_CONFIG_BENCH_SAS_URL: azureSas },
      },
    ];
    if (samba) {
      const obscured = (await timedBash('obscure', 'rclone obscure "$1"', [samba.password], { signal })).output.trim();
      subjects.push({
        driver: 'SMB',
        mount: '/smb',
        remote: `bench:${samba.share}/root`,
        env: {
          RCLONE_CONFIG_BENCH_TYPE: 'smb',
          RCLONE_CONFIG_BENCH_HOST: '127.0.0.1',
          RCLONE_CONFIG_BENCH_PORT: String(samba.port),
          RCLONE_CONFIG_BENCH_USER: samba.user,
          RCLONE_CONFIG_BENCH_PASS: obscured,
        },
      });
    }

    const listRows: Array<Array<string | number | null>> = [];
    const dlRows: Array<Array<string | number | null>> = [];
    for (const sub of subjects) {
      // (AWS_CA_BUNDLE, when the machine sets it, breaks rclone 1.60's S3 client even over http.)
      const rclone = (args: string) => timedBash(`rclone-${sub.driver}`, `env -u AWS_CA_BUNDLE ${Object.entries(sub.env).map(([k, v]) => `${k}='${v}'`).join(' ')} rclone --config /dev/null ${args}`, [], { signal, timeoutMs: 600_000 });

      // Listing.
      const atriumMs: number[] = [];
      const rcloneMs: number[] = [];
      for (let i = 0; i < LIST_RUNS; i++) {
        const t0 = nowMs();
        const r = await apiCall<{ total: number }>(a.base, '/api/fs/list', { token: a.token, body: { path: `${sub.mount}/list`, refresh: true, per_page: 0 } });
        atriumMs.push(nowMs() - t0);
        if (r.data?.total !== count) throw new Error(`${sub.driver}: Atrium listed ${r.data?.total} entries, not ${count}`);
        const rc = await rclone(`lsjson ${sub.remote}/list | grep -c '"Path"'`);
        if (rc.code !== 0 || Number(rc.output.trim()) !== count) throw new Error(`rclone lsjson failed: ${rc.output.slice(-300)}`);
        rcloneMs.push(rc.seconds * 1000);
      }
      const la = median(atriumMs);
      const lr = median(rcloneMs);
      listRows.push([sub.driver, count, fmtNum(la, 0), fmtNum(lr, 0), fmtNum(la / lr, 2)]);
      result.summary.push({ benchmark: `${sub.driver}: list ${count} entries (ms, p50)`, atrium: la, peerName: 'rclone lsjson', peer: lr, unit: 'ms', ratio: la / lr, target: '', met: null });

      // Streaming the large object.
      const { data } = await apiCall<{ sign?: string }>(a.base, '/api/fs/get', { token: a.token, body: { path: `${sub.mount}/big/big.bin` } });
      const url = `${a.base}/d${sub.mount}/big/big.bin${data?.sign ? `?sign=${encodeURIComponent(data.sign)}` : ''}`;
      const atriumMbps: number[] = [];
      const rcloneMbps: number[] = [];
      let peakRss = 0;
      const idleRss = (await rssOf(a.proc.pid)) ?? 0;
      for (let i = 0; i < DOWNLOAD_REPS; i++) {
        const rss = sampleRss(a.proc.pid);
        const dl = await parallelDownload('curl', url, 1, fileSize, 900, signal);
        peakRss = Math.max(peakRss, (await rss.stop()).peak);
        atriumMbps.push(dl.mbps);
        const rc = await rclone(`cat ${sub.remote}/big/big.bin > /dev/null`);
        if (rc.code !== 0) throw new Error(`rclone cat failed: ${rc.output.slice(-300)}`);
        rcloneMbps.push(fileSize / 1e6 / rc.seconds);
      }
      const da = median(atriumMbps);
      const dr = median(rcloneMbps);
      dlRows.push([sub.driver, fmtBytes(fileSize), fmtNum(da), fmtNum(dr), fmtNum(da / dr, 2), fmtBytes(idleRss), fmtBytes(peakRss)]);
      const row: SummaryRow = { benchmark: `${sub.driver}: stream ${fmtBytes(fileSize)} via /d (MB/s)`, atrium: da, peerName: 'rclone cat', peer: dr, unit: 'MB/s', ratio: da / dr, target: '≥ 1.00× rclone', met: da >= dr };
      result.summary.push(row);
      result.summary.push({
        benchmark: `${sub.driver}: Atrium RSS growth while streaming (MB)`,
        atrium: (peakRss - idleRss) / 1e6,
        unit: 'MB',
        target: 'flat (< 64 MB over idle)',
        met: peakRss - idleRss < 64e6,
      });
      result.raw[`${sub.driver}_list_ms`] = { atrium: atriumMs, rclone: rcloneMs };
      result.raw[`${sub.driver}_stream_mbps`] = { atrium: atriumMbps, rclone: rcloneMbps, idle_rss: idleRss, peak_rss: peakRss };
      ctx.log(`${sub.driver}: list ${fmtNum(la, 0)} ms vs rclone ${fmtNum(lr, 0)} ms; stream ${fmtNum(da)} MB/s vs rclone ${fmtNum(dr)} MB/s, RSS ${fmtBytes(peakRss)}`);
    }
    result.details.push({ title: `Cold listing of ${count} entries (median of ${LIST_RUNS})`, columns: ['driver', 'entries', 'Atrium ms', 'rclone lsjson ms', 'ratio'], rows: listRows });
    result.details.push({
      title: `Streaming one object through /d (curl) vs rclone cat (median of ${DOWNLOAD_REPS})`,
      columns: ['driver', 'size', 'Atrium MB/s', 'rclone MB/s', 'ratio', 'Atrium RSS idle', 'Atrium peak RSS'],
      rows: dlRows,
    });
  } catch (err) {
    result.errors.push({ benchmark: 'drivers', subject: 'setup', message: errMsg(err) });
    throw err;
  } finally {
    await atrium?.stop();
    await s3?.destroy();
    await sshd?.destroy();
    await samba?.destroy();
    await azurite?.destroy();
    removeTempDir(work);
  }
}

export const driversBench: BenchModule = {
  area: 'drivers',
  title: 'Remote drivers (S3, SFTP, SMB, Azure Blob Storage) vs rclone',
  budgetMs: (quick) => (quick ? 5 : 15) * 60_000,
  run,
};
