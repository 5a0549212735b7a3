// Area `crypt`: the Crypt driver (rclone's crypt format) against rclone itself, on one file of
// incompressible data in a local folder.
//
// - read: `GET /d/<crypt>/file` (Atrium decrypts, curl downloads) vs `rclone cat C:file >
//   /dev/null` (rclone decrypts the same encrypted file), and Atrium's plain Local download of
//   the same plaintext as the no-encryption reference;
// - write: `PUT /api/fs/put` into the crypt storage (Atrium encrypts, writes into the Local
//   storage under it) vs `rclone copyto <plain> C:file` (rclone encrypts and writes).
// Each figure is the median of BENCH_REPS (default 3) runs, order rotated. Every result is checked:
// Atrium's download must have the file's size; what Atrium wrote must decrypt with `rclone cat`
// to the source's digest (checked once after the runs).

import { createHash } from 'node:crypto';
import { createReadStream, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { apiCall, curlUpload, parallelDownload } from './lib/http.js';
import { createBigFile, warmPageCache } from './lib/files.js';
import { makeTempDir, removeTempDir, runCommand, timedBash } from './lib/proc.js';
import { startAtrium, versionOf, which, type Atrium } from './lib/servers.js';
import { fmtBytes, median, MiB } from './lib/stats.js';
import { errorText } from './lib/report.js';
import type { AreaResult, BenchContext, BenchModule } from './lib/types.js';

const PASSWORD = 'bench crypt password';
const errMsg = (err: unknown) => errorText(err, 4);
const loadavg = () => os.loadavg().map((v) => v.toFixed(2)).join(' / ');

async function sha256File(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const c of createReadStream(file)) h.update(c as Buffer);
  return h.digest('hex');
}

async function run(ctx: BenchContext, result: AreaResult): Promise<void> {
  const { signal } = ctx;
  const fileSize = (Number(process.env.BENCH_FILE_MIB) || (ctx.quick ? 64 : 256)) * MiB;
  const reps = Number(process.env.BENCH_REPS) || 3;
  result.parameters = { file_size: fmtBytes(fileSize), reps, names: 'standard (EME, base32), folders encrypted' };
  if (!(await which('rclone'))) throw new Error('rclone is missing: run bench/setup.sh');
  if (!(await which('curl'))) throw new Error('curl is missing: run bench/setup.sh');
  result.environment = {
    node: process.version,
    cpus: `${os.cpus().length} × ${os.cpus()[0]?.model ?? '?'}`,
    rclone: await versionOf('rclone', ['version']),
    loadavg_at_start: loadavg(),
  };

  const tmp = makeTempDir('atrium-bench-crypt-');
  let atrium: Atrium | undefined;
  try {
    const data = path.join(tmp, 'data');
    const files = path.join(data, 'files');
    const enc = path.join(files, 'enc');
    mkdirSync(enc, { recursive: true });
    const plain = path.join(files, 'plain.bin');
    ctx.log(`crypt: creating a ${fmtBytes(fileSize)} file`);
    await createBigFile(plain, fileSize, signal);
    const digest = await sha256File(plain);
    const obscured = (await runCommand('rclone-obscure', 'rclone', ['obscure', PASSWORD])).output.trim();
    const env = `RCLONE_CONFIG_C_TYPE=crypt RCLONE_CONFIG_C_REMOTE="$1" RCLONE_CONFIG_C_PASSWORD="$2" RCLONE_CONFIG_C_FILENAME_ENCRYPTION=standard RCLONE_CONFIG_C_DIRECTORY_NAME_ENCRYPTION=true`;
    const rclone = (cmd: string, ...args: string[]) => timedBash('rclone', `${env} rclone --config /dev/null ${cmd}`, [enc, obscured, ...args], { signal, timeoutMs: 600_000 });

    const seeded = await rclone('copyto "$3" "C:seed.bin"', plain);
    if (seeded.code !== 0) throw new Error(`rclone copyto failed: ${seeded.output.slice(-300)}`);
    await warmPageCache(plain);

    atrium = await startAtrium(ctx.repoRoot, data, { signal });
    await apiCall(atrium.base, '/api/admin/storage/create', {
      token: atrium.token,
      body: {
        mount_path: '/sec',
        driver: 'Crypt',
        cache_expiration: 0,
        addition: JSON.stringify({ remote_path: '/enc', password: PASSWORD, filename_encryption: 'standard', directory_name_encryption: 'true', filename_encoding: 'base32' }),
      },
    });
    const sign = async (p: string) => (await apiCall<{ sign: string }>(atrium!.base, '/api/fs/get', { token: atrium!.token, body: { path: p } })).data?.sign ?? '';
    const cryptUrl = `${atrium.base}/d/sec/seed.bin?sign=${await sign('/sec/seed.bin')}`;
    const plainUrl = `${atrium.base}/d/plain.bin?sign=${await sign('/plain.bin')}`;

    const samples: Record<string, number[]> = { read_atrium: [], read_rclone: [], read_atrium_plain: [], write_atrium: [], write_rclone: [] };
    for (let i = 0; i < reps; i++) {
      ctx.log(`crypt: repetition ${i + 1}/${reps}`);
      const readers: Array<[string, () => Promise<number>]> = [
        ['read_atrium', async () => (await parallelDownload('curl', cryptUrl, 1, fileSize, 600, signal)).mbps],
        ['read_rclone', async () => {
          const r = await rclone('cat "C:seed.bin" > /dev/null');
          if (r.code !== 0) throw new Error(`rclone cat failed: ${r.output.slice(-300)}`);
          return fileSize / 1e6 / r.seconds;
        }],
        ['read_atrium_plain', async () => (await parallelDownload('curl', plainUrl, 1, fileSize, 600, signal)).mbps],
        ['write_atrium', async () => {
          const r = await curlUpload(`${atrium!.base}/api/fs/put`, plain, { headers: { authorization: atrium!.token, 'file-path': encodeURIComponent('/sec/up-atrium.bin') }, timeoutS: 600, signal });
          if (r.status !== 200 || !r.body.includes('"code":200')) throw new Error(`upload answered ${r.status}: ${r.body.slice(0, 200)}`);
          return fileSize / 1e6 / r.seconds;
        }],
        ['write_rclone', async () => {
          const r = await rclone('copyto --ignore-times "$3" "C:up-rclone.bin"', plain);
          if (r.code !== 0) throw new Error(`rclone copyto failed: ${r.output.slice(-300)}`);
          return fileSize / 1e6 / r.seconds;
        }],
      ];
      const order = [...readers.slice(i % readers.length), ...readers.slice(0, i % readers.length)];
      for (const [name, fn] of order) {
        try {
          samples[name]!.push(await fn());
        } catch (err) {
          result.errors.push({ benchmark: name, subject: name.includes('rclone') ? 'rclone' : 'atrium', message: errMsg(err) });
        }
      }
    }
    const check = await timedBash('rclone', `${env} rclone --config /dev/null cat "C:up-atrium.bin" | sha256sum`, [enc, obscured], { signal, timeoutMs: 600_000 });
    const written = check.output.trim().split(/\s+/)[0];
    if (written !== digest) result.errors.push({ benchmark: 'write (rclone cat of what Atrium wrote)', subject: 'atrium', message: `sha256 ${written} != ${digest}` });

    const med = (k: string) => (samples[k]!.length ? median(samples[k]!) : null);
    const ratio = (a: number | null, b: number | null) => (a !== null && b !== null ? a / b : null);
    const readA = med('read_atrium');
    const readR = med('read_rclone');
    const writeA = med('write_atrium');
    const writeR = med('write_rclone');
    result.summary.push(
      { benchmark: `read ${fmtBytes(fileSize)} through Crypt (/d, curl) vs rclone cat`, atrium: readA, peerName: 'rclone cat', peer: readR, unit: 'MB/s', ratio: ratio(readA, readR) },
      { benchmark: `read the same size from Local (no decryption)`, atrium: med('read_atrium_plain'), unit: 'MB/s' },
      { benchmark: `write ${fmtBytes(fileSize)} through Crypt (PUT /api/fs/put) vs rclone copyto`, atrium: writeA, peerName: 'rclone copyto', peer: writeR, unit: 'MB/s', ratio: ratio(writeA, writeR) },
    );
    result.details.push({
      title: 'every run, MB/s',
      columns: ['run', ...Object.keys(samples)],
      rows: Array.from({ length: reps }, (_, i) => [i + 1, ...Object.values(samples).map((v) => (v[i] === undefined ? null : Number(v[i]!.toFixed(1))))]),
    });
    result.raw.mbps = samples;
    result.environment.loadavg_at_end = `${loadavg()} (other work on the machine skews the figures)`;
  } finally {
    await atrium?.stop();
    removeTempDir(tmp);
  }
}

export const cryptBench: BenchModule = {
  area: 'crypt',
  title: 'Crypt driver (rclone crypt format) vs rclone',
  budgetMs: (quick) => (quick ? 5 : 15) * 60_000,
  run,
};
