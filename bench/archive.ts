// Area `archive`: archives as folders (src/archive/).
//
// 1. A 100 000-entry zip (made by Python's zipfile, entries of a few bytes) listed through
//    POST /api/fs/archive/meta (refresh, so uncached) on a Local storage and on S3 (s3rver behind
//    a byte-counting loopback relay): time, and bytes read (S3: bytes the relay carried; Local:
//    the growth of the server's /proc/<pid>/io rchar). The same zip on an OpenList mount of the
//    server itself through the byte-counting relay: forwarded to the peer
//    (forward_archive_requests, the default: the peer reads it and answers the tree as JSON) and
//    read here by ranges of the file's link (forwarding off).
// 2. Extracting a 1 GiB zip (16 files of 64 MiB, half random half zeros, deflated) with a
//    decompress task into a Local folder, against `unzip` and `bsdtar -x` of the same file in
//    the same run (BENCH_REPS rounds, default 3, medians; `sync` before each run), with the
//    server's peak RSS over the whole run. Targets: ≤ 1.5× unzip, peak RSS < 200 MB.

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { BUCKET, S3_KEY, type S3Peer, startS3rver } from '../test/drivers/s3-peer.js';
import { apiCall } from './lib/http.js';
import { makeTempDir, removeTempDir, rssOf, sampleRss, timedBash } from './lib/proc.js';
import { startAtrium, type Atrium, which } from './lib/servers.js';
import { median, nowMs } from './lib/stats.js';
import type { AreaResult, BenchContext, BenchModule } from './lib/types.js';

const round = (v: number) => Number(v.toFixed(2));
const MiB = 1024 * 1024;

/** A loopback relay to `port` counting the bytes the upstream sends back. */
function countingRelay(port: number): Promise<{ port: number; bytes(): number; close(): void }> {
  let bytes = 0;
  const server = net.createServer((client) => {
    const up = net.connect(port, '127.0.0.1');
    up.on('data', (c: Buffer) => (bytes += c.length));
    client.pipe(up).pipe(client);
    const end = () => (client.destroy(), up.destroy());
    client.on('error', end);
    up.on('error', end);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ port: (server.address() as net.AddressInfo).port, bytes: () => bytes, close: () => server.close() })),
  );
}

const rchar = (pid: number) => Number(/rchar: (\d+)/.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? NaN);

async function waitTasks(atrium: Atrium, signal: AbortSignal): Promise<void> {
  for (;;) {
    signal.throwIfAborted();
    const undone = (await apiCall<unknown[]>(atrium.base, '/api/task/decompress/undone', { token: atrium.token })).data ?? [];
    const undoneUp = (await apiCall<unknown[]>(atrium.base, '/api/task/decompress_upload/undone', { token: atrium.token })).data ?? [];
    if (undone.length === 0 && undoneUp.length === 0) {
      const failed = [
        ...((await apiCall<Array<{ state: number; error: string }>>(atrium.base, '/api/task/decompress/done', { token: atrium.token })).data ?? []),
        ...((await apiCall<Array<{ state: number; error: string }>>(atrium.base, '/api/task/decompress_upload/done', { token: atrium.token })).data ?? []),
      ].filter((t) => t.state !== 2);
      if (failed.length) throw new Error(`extraction failed: ${failed[0]!.error}`);
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function run(ctx: BenchContext, result: AreaResult): Promise<void> {
  const entries = Number(process.env.BENCH_ARCHIVE_ENTRIES) || (ctx.quick ? 10_000 : 100_000);
  const extractMiB = Number(process.env.BENCH_FILE_MIB) || (ctx.quick ? 128 : 1024);
  result.parameters = { entries, extract_mib: extractMiB };
  result.environment = { node: process.version, cpus: `${os.cpus().length} × ${os.cpus()[0]?.model ?? '?'}`, loadavg_at_start: os.loadavg().map((v) => v.toFixed(2)).join(' / ') };
  const tmp = makeTempDir('atrium-bench-archive-');
  let atrium: Atrium | undefined;
  let s3: S3Peer | undefined;
  let relay: Awaited<ReturnType<typeof countingRelay>> | undefined;
  try {
    const data = path.join(tmp, 'data');
    const files = path.join(data, 'files');
    mkdirSync(files, { recursive: true });
    ctx.log(`archive: making a ${entries}-entry zip and a ${extractMiB} MiB zip`);
    execFileSync('python3', ['-c', `
import zipfile, sys
with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as z:
    for i in range(int(sys.argv[2])):
        z.writestr('d%03d/file-%06d.txt' % (i // 1000, i), 'entry %d' % i)
`, path.join(files, 'many.zip'), String(entries)]);
    const parts = path.join(tmp, 'parts');
    mkdirSync(parts);
    const partMiB = 64;
    for (let i = 0; i < Math.max(1, Math.round(extractMiB / partMiB)); i++) {
      execFileSync('bash', ['-c', `{ head -c ${(partMiB / 2) * MiB} /dev/urandom; head -c ${(partMiB / 2) * MiB} /dev/zero; } > ${parts}/part-${i}.bin`]);
    }
    execFileSync('zip', ['-q', '-1', '-r', path.join(files, 'big.zip'), '.'], { cwd: parts });
    rmSync(parts, { recursive: true, force: true });
    // A second copy for the OpenList rows, so that no listing cache of the first one serves them.
    execFileSync('cp', [path.join(files, 'many.zip'), path.join(files, 'peer-many.zip')]);
    const manySize = Number(execFileSync('stat', ['-c', '%s', path.join(files, 'many.zip')]).toString());
    const bigSize = Number(execFileSync('stat', ['-c', '%s', path.join(files, 'big.zip')]).toString());

    atrium = await startAtrium(ctx.repoRoot, data, { signal: ctx.signal });
    const t = { token: atrium.token };
    const pid = atrium.proc.pid;
    const startRss = (await rssOf(pid)) ?? 0;
    const wholeRss = sampleRss(pid);

    // Listing on Local.
    ctx.log('archive: listing on Local');
    const before = rchar(pid);
    const l0 = nowMs();
    const local = await apiCall<{ content: unknown[] }>(atrium.base, '/api/fs/archive/meta', { ...t, body: { path: '/many.zip', refresh: true }, timeoutMs: 300_000 });
    const localMs = nowMs() - l0;
    const localRead = rchar(pid) - before;
    if (!local.data?.content) throw new Error('listing the zip on Local failed');
    const c0 = nowMs();
    await apiCall(atrium.base, '/api/fs/archive/list', { ...t, body: { path: '/many.zip', inner_path: '/d005' } });
    const cachedMs = nowMs() - c0;

    // Listing on S3, through the counting relay.
    ctx.log('archive: listing on S3 (s3rver)');
    s3 = await startS3rver();
    await s3.put('root/many.zip', readFileSync(path.join(files, 'many.zip')));
    relay = await countingRelay(s3.port);
    const addition = { bucket: BUCKET, endpoint: `http://127.0.0.1:${relay.port}`, access_key_id: S3_KEY, secret_access_key: S3_KEY, root_folder_path: '/root', region: 'us-east-1', force_path_style: true, list_object_version: 'v1' };
    const created = await apiCall(atrium.base, '/api/admin/storage/create', { ...t, body: { mount_path: '/s3', driver: 'S3', addition: JSON.stringify(addition) } });
    if ((created as { data: unknown }).data === undefined) throw new Error('creating the S3 storage failed');
    const b0 = relay.bytes();
    const s0 = nowMs();
    const remote = await apiCall<{ content: unknown[] }>(atrium.base, '/api/fs/archive/meta', { ...t, body: { path: '/s3/many.zip', refresh: true }, timeoutMs: 300_000 });
    const s3Ms = nowMs() - s0;
    const s3Read = relay.bytes() - b0;
    if (!remote.data?.content) throw new Error('listing the zip on S3 failed');

    // Extraction: Atrium's task, unzip, bsdtar, in rounds; each run starts after `sync`, so none
    // pays for the writeback of what ran before it (the zip just made, the previous extraction).
    const rounds = Number(process.env.BENCH_REPS) || (ctx.quick ? 1 : 3);
    ctx.log(`archive: extracting ${extractMiB} MiB (Atrium, unzip, bsdtar), ${rounds} rounds`);
    const baseRss = (await rssOf(pid)) ?? 0;
    const rss = sampleRss(pid);
    const hasBsdtar = await which('bsdtar');
    const runs: { atrium: number[]; unzip: number[]; bsdtar: number[] } = { atrium: [], unzip: [], bsdtar: [] };
    const sync = () => execFileSync('sync');
    for (let r = 0; r < rounds; r++) {
      sync();
      const e0 = nowMs();
      await apiCall(atrium.base, '/api/fs/archive/decompress', { ...t, body: { src_dir: '/', dst_dir: '/out-atrium', name: ['big.zip'] } });
      await waitTasks(atrium, ctx.signal);
      runs.atrium.push((nowMs() - e0) / 1000);
      rmSync(path.join(files, 'out-atrium'), { recursive: true, force: true });
      const unzipOut = path.join(tmp, 'unzip-out');
      sync();
      const u = await timedBash('unzip', 'unzip -q -o "$1" -d "$2"', [path.join(files, 'big.zip'), unzipOut], { signal: ctx.signal });
      if (u.code === 0) runs.unzip.push(u.seconds);
      rmSync(unzipOut, { recursive: true, force: true });
      if (hasBsdtar) {
        const out = path.join(tmp, 'bsdtar-out');
        mkdirSync(out);
        sync();
        const bs = await timedBash('bsdtar', 'bsdtar -x -f "$1" -C "$2"', [path.join(files, 'big.zip'), out], { signal: ctx.signal });
        if (bs.code === 0) runs.bsdtar.push(bs.seconds);
        rmSync(out, { recursive: true, force: true });
      }
    }
    const { peak } = await rss.stop();
    const { peak: wholePeak } = await wholeRss.stop();

    // The same zip on OpenList mounts of this server, through a second counting relay: after the
    // extraction, so the target (listings on Local and S3, then the extraction) is
    // measured alone; the forwarded listing (this server is also the peer, parsing its own 20 MB
    // tree answer) has its own RSS row.
    const olRss = sampleRss(pid);
    ctx.log('archive: listing on OpenList mounts (forwarded, then read here)');
    const selfRelay = await countingRelay(atrium.port);
    let olForward: { ms: number; bytes: number };
    let olLocal: { ms: number; bytes: number };
    try {
      const ol = async (mount: string, forward: boolean) => {
        const addition = { url: `http://127.0.0.1:${selfRelay.port}`, token: atrium!.token, root_folder_path: '/', forward_archive_requests: forward };
        await apiCall(atrium!.base, '/api/admin/storage/create', { ...t, body: { mount_path: mount, driver: 'OpenList', addition: JSON.stringify(addition) } });
        const b = selfRelay.bytes();
        const t0 = nowMs();
        const m = await apiCall<{ content: unknown[] }>(atrium!.base, '/api/fs/archive/meta', { ...t, body: { path: `${mount}/peer-many.zip`, refresh: true }, timeoutMs: 300_000 });
        if (!m.data?.content) throw new Error(`listing the zip on ${mount} failed`);
        return { ms: nowMs() - t0, bytes: selfRelay.bytes() - b };
      };
      olForward = await ol('/ol-forward', true);
      olLocal = await ol('/ol-local', false);
    } finally {
      selfRelay.close();
    }
    const { peak: olPeak } = await olRss.stop();

    const atriumS = median(runs.atrium);
    const bsdtarS = runs.bsdtar.length ? median(runs.bsdtar) : null;
    const unzipS = runs.unzip.length ? median(runs.unzip) : null;

    result.summary.push(
      { benchmark: `archive/meta of a ${entries}-entry zip (${(manySize / MiB).toFixed(1)} MiB) on Local, uncached`, atrium: round(localMs), unit: 'ms' },
      { benchmark: `  bytes read on Local (server rchar growth)`, atrium: localRead, unit: 'B', target: `< ${manySize} (archive size)`, met: localRead < manySize },
      { benchmark: `archive/list of one inner folder, cached`, atrium: round(cachedMs), unit: 'ms' },
      { benchmark: `archive/meta of the same zip on S3 (s3rver), uncached`, atrium: round(s3Ms), unit: 'ms' },
      { benchmark: `  bytes read from S3 (relay count)`, atrium: s3Read, unit: 'B', target: `< ${manySize} (archive size)`, met: s3Read < manySize },
      { benchmark: `archive/meta of the same zip on an OpenList mount, forwarded to the peer, uncached`, atrium: round(olForward.ms), unit: 'ms', peerName: 'read here by ranges', peer: round(olLocal.ms), ratio: round(olForward.ms / olLocal.ms) },
      { benchmark: `  bytes from the peer, forwarded (the tree as JSON) vs read here`, atrium: olForward.bytes, unit: 'B', peerName: 'read here by ranges', peer: olLocal.bytes, ratio: round(olForward.bytes / olLocal.bytes) },
      {
        benchmark: `extract ${extractMiB} MiB zip (${(bigSize / MiB).toFixed(0)} MiB) with a decompress task, median of ${rounds}`,
        atrium: round(atriumS),
        peerName: 'unzip',
        peer: unzipS === null ? null : round(unzipS),
        unit: 's',
        ratio: unzipS ? round(atriumS / unzipS) : null,
        target: '≤ 1.5× unzip',
        met: unzipS ? atriumS / unzipS <= 1.5 : null,
      },
      { benchmark: `  the same with bsdtar -x`, atrium: round(atriumS), peerName: 'bsdtar', peer: bsdtarS === null ? null : round(bsdtarS), unit: 's', ratio: bsdtarS ? round(atriumS / bsdtarS) : null },
      { benchmark: `  server peak RSS during the extraction (${round(baseRss / MiB)} MB before it)`, atrium: round(peak / MiB), unit: 'MB', target: '< 200 MB', met: peak / MiB < 200 },
      { benchmark: `server peak RSS over the listings on Local and S3 and the extractions (${round(startRss / MiB)} MB at start)`, atrium: round(wholePeak / MiB), unit: 'MB', target: '< 200 MB', met: wholePeak / MiB < 200 },
      { benchmark: `server peak RSS during the two OpenList-mount listings after them`, atrium: round(olPeak / MiB), unit: 'MB' },
    );
    result.raw = { localMs, localRead, cachedMs, s3Ms, s3Read, olForward, olLocal, atriumS, unzipS, bsdtarS, runs, peakRss: peak, baseRss, startRss, wholePeak, olPeak, manySize, bigSize };
  } finally {
    relay?.close();
    await atrium?.stop();
    await s3?.destroy();
    removeTempDir(tmp);
  }
}

export const archiveBench: BenchModule = {
  area: 'archive',
  title: 'Archives: listing a 100 000-entry zip (Local, S3) and extracting 1 GiB vs unzip/bsdtar',
  budgetMs: (quick) => (quick ? 3 : 10) * 60_000,
  run,
};
