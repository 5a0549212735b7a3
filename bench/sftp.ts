// Area `sftp` (issue 8: "Upload and download of a 1 GiB file with OpenSSH's sftp against Atrium
// and against OpenSSH's own sftp-server on the same disk (sshd from Debian on a loopback port),
// in one run. Target: at least 60% of OpenSSH's throughput, flat memory.").
//
// Both servers get the same client, OpenSSH's `sftp -b` with its defaults (64 requests in flight
// of the lengths each server's `limits@openssh.com` answer gives: 255 KiB both ways with
// sftp-server, 255 KiB writes and 64 KiB reads with Atrium; the cipher each server negotiates
// with it: chacha20-poly1305 with both, which offer sshd's list in sshd's order), timed inside bash. The private sshd runs `sshd -D -f <own config>` on a free
// loopback port with its own host key, one authorized key and Debian's sftp-server; Atrium's
// files and sshd's folder are on the same disk (the temp folder). Runs alternate between the two
// servers; every timed upload is preceded by an untimed write + delete of as many bytes (see
// write.ts: the VM hands freed memory back to the host and first touches are slow). Uploads are
// checked by size, downloads by the digest of their first and last MiB.

import { writeFileSync, mkdirSync, chmodSync } from 'node:fs';
import fs from 'node:fs/promises';
import { loadavg } from 'node:os';
import net from 'node:net';
import path from 'node:path';
import { createBigFile, headTailDigest } from './lib/files.js';
import { freePort, makeTempDir, removeTempDir, rssOf, runCommand, sampleRss, sleep, startProcess, timedBash, type Proc } from './lib/proc.js';
import { startAtrium, versionOf, which } from './lib/servers.js';
import { fmtNum, GiB, median, MiB } from './lib/stats.js';
import type { AreaResult, BenchContext, BenchModule } from './lib/types.js';

const SSHD = '/usr/sbin/sshd';
const SFTP_SERVER = '/usr/lib/openssh/sftp-server';

function fileSize(quick: boolean): number {
  const mib = Number(process.env.BENCH_FILE_MIB ?? '');
  return mib > 0 ? mib * MiB : quick ? 64 * MiB : GiB;
}

async function waitPort(port: number, proc: Proc, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      s.once('connect', () => (s.destroy(), resolve(true)));
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    if (proc.done()) throw new Error(`${proc.name} exited: ${proc.output().slice(-1000)}`);
    if (Date.now() > end) throw new Error(`port ${port} did not open in ${timeoutMs} ms`);
    await sleep(100);
  }
}

interface Target {
  name: string;
  port: number;
  /** Arguments of `sftp` before `-b` (auth, host key, port). */
  args: string[];
  login: string;
  /** Where an upload named `name` lands, as the server's client names it and on disk. */
  remote(name: string): string;
  onDisk(name: string): string;
  pid?: number;
}

export const sftpBench: BenchModule = {
  area: 'sftp',
  title: 'SFTP upload and download: Atrium vs OpenSSH sftp-server',
  budgetMs: (quick) => (quick ? 5 : 15) * 60_000,
  async run(ctx: BenchContext, result: AreaResult) {
    for (const tool of ['sftp', 'sshpass', 'ssh-keygen', SSHD, SFTP_SERVER]) {
      if (!(await which(tool))) throw new Error(`${tool} is missing (bash bench/setup.sh installs openssh-server, sshpass)`);
    }
    if (ctx.atriumBuildError) throw new Error(ctx.atriumBuildError);
    const size = fileSize(ctx.quick);
    const reps = Number(process.env.BENCH_REPS ?? '') || 2;
    const work = makeTempDir('atrium-bench-sftp-');
    try {
      result.parameters = { file_bytes: size, repetitions: reps, client: 'OpenSSH sftp -b (defaults)', temp: work };
      result.environment = { openssh: await versionOf('ssh', ['-V']), loadavg_at_start: loadavg().map((v) => v.toFixed(2)).join(' ') };
      const src = path.join(work, 'source.bin');
      ctx.log(`writing a ${fmtNum(size / MiB, 0)} MiB source file`);
      await createBigFile(src, size, ctx.signal);
      const srcDigest = await headTailDigest(src);

      // OpenSSH: own sshd with its own host key and one authorized key
      const sshdDir = path.join(work, 'sshd');
      const sshdFiles = path.join(work, 'sshd-files');
      mkdirSync(sshdDir, { recursive: true });
      mkdirSync(sshdFiles);
      mkdirSync('/run/sshd', { recursive: true });
      for (const k of ['host_key', 'client_key']) await runCommand('ssh-keygen', 'ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path.join(sshdDir, k)]);
      await fs.copyFile(path.join(sshdDir, 'client_key.pub'), path.join(sshdDir, 'authorized_keys'));
      chmodSync(path.join(sshdDir, 'authorized_keys'), 0o600);
      const sshdPort = await freePort();
      writeFileSync(
        path.join(sshdDir, 'sshd_config'),
        [
          `Port ${sshdPort}`,
          'ListenAddress 127.0.0.1',
          `HostKey ${path.join(sshdDir, 'host_key')}`,
          `AuthorizedKeysFile ${path.join(sshdDir, 'authorized_keys')}`,
          'PasswordAuthentication no',
          'KbdInteractiveAuthentication no',
          'UsePAM no',
          'StrictModes no',
          'PermitRootLogin prohibit-password',
          'PidFile none',
          `Subsystem sftp ${SFTP_SERVER}`,
          '',
        ].join('\n'),
      );
      const sshd = startProcess('sshd', SSHD, ['-D', '-e', '-f', path.join(sshdDir, 'sshd_config')]);
      await waitPort(sshdPort, sshd, 10_000);
      const user = process.env.USER || 'root';

      // Atrium with SFTP on a free port
      const data = path.join(work, 'atrium');
      const atriumPort = await freePort();
      mkdirSync(data, { recursive: true });
      writeFileSync(path.join(data, 'config.json'), JSON.stringify({ sftp: { enable: true, listen: `127.0.0.1:${atriumPort}` } }));
      ctx.log('starting Atrium (first start makes its Ed25519 host key)');
      const atrium = await startAtrium(ctx.repoRoot, data, { signal: ctx.signal });
      await waitPort(atriumPort, atrium.proc, 60_000);
      const common = ['-q', '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null', '-o', 'LogLevel=ERROR'];
      const targets: Target[] = [
        {
          name: 'atrium',
          port: atriumPort,
          args: ['-p', atrium.password, 'sftp', ...common, '-P', String(atriumPort), '-o', 'BatchMode=no', '-o', 'PubkeyAuthentication=no'],
          login: 'admin@127.0.0.1',
          remote: (n) => `/${n}`,
          onDisk: (n) => path.join(data, 'files', n),
          pid: atrium.proc.pid,
        },
        {
          name: 'openssh',
          port: sshdPort,
          args: ['sftp', ...common, '-P', String(sshdPort), '-i', path.join(sshdDir, 'client_key'), '-o', 'IdentitiesOnly=yes'],
          login: `${user}@127.0.0.1`,
          remote: (n) => path.join(sshdFiles, n),
          onDisk: (n) => path.join(sshdFiles, n),
        },
      ];
      const idleRss = await rssOf(atrium.proc.pid);
      const rss = sampleRss(atrium.proc.pid, 100);
      const runs: Array<{ server: string; op: string; rep: number; seconds: number; mbps: number }> = [];
      const transfer = async (t: Target, op: 'upload' | 'download', rep: number) => {
        const name = `bench-${rep}.bin`;
        const back = path.join(work, `back-${t.name}.bin`);
        const command = op === 'upload' ? `put ${src} ${t.remote(name)}` : `get ${t.remote(name)} ${back}`;
        const batch = path.join(work, `batch-${t.name}-${op}`);
        writeFileSync(batch, `${command}\n`);
        if (op === 'upload') {
          const scratch = path.join(work, 'scratch.bin');
          await runCommand('prefault', 'dd', ['if=/dev/zero', `of=${scratch}`, 'bs=4M', `count=${Math.ceil(size / (4 * MiB))}`, 'status=none']);
          await fs.rm(scratch, { force: true });
        }
        const runner = t.name === 'atrium' ? 'sshpass' : t.args[0]!;
        const args = t.name === 'atrium' ? t.args : t.args.slice(1);
        const r = await timedBash(`${t.name}-${op}`, '"$@"', [runner, ...args, '-b', batch, t.login], { signal: ctx.signal, timeoutMs: 600_000 });
        if (r.code !== 0) throw new Error(`${t.name} ${op} failed (${r.code}): ${r.output.slice(-500)}`);
        if (op === 'upload') {
          const st = await fs.stat(t.onDisk(name));
          if (st.size !== size) throw new Error(`${t.name} upload stored ${st.size} of ${size} bytes`);
        } else {
          const d = await headTailDigest(back);
          if (d.size !== srcDigest.size || d.head !== srcDigest.head || d.tail !== srcDigest.tail) throw new Error(`${t.name} download differs from the source`);
          await fs.rm(back, { force: true });
        }
        runs.push({ server: t.name, op, rep, seconds: r.seconds, mbps: size / 1e6 / r.seconds });
        ctx.log(`${t.name} ${op} #${rep}: ${fmtNum(size / 1e6 / r.seconds)} MB/s`);
      };
      for (let rep = 0; rep < reps; rep++) {
        const order = rep % 2 === 0 ? targets : [...targets].reverse();
        for (const t of order) await transfer(t, 'upload', rep);
        for (const t of order) await transfer(t, 'download', rep);
        for (const t of targets) await fs.rm(t.onDisk(`bench-${rep}.bin`), { force: true });
      }
      const { peak, samples } = await rss.stop();
      await atrium.stop();
      await sshd.stop();

      result.details.push({
        title: 'Every transfer (MB/s = 10^6 bytes per second)',
        columns: ['server', 'operation', 'repetition', 'seconds', 'MB/s'],
        rows: runs.map((r) => [r.server, r.op, r.rep + 1, fmtNum(r.seconds, 2), fmtNum(r.mbps)]),
      });
      for (const op of ['upload', 'download'] as const) {
        const of = (server: string) => median(runs.filter((r) => r.server === server && r.op === op).map((r) => r.mbps));
        const a = of('atrium');
        const o = of('openssh');
        result.summary.push({
          benchmark: `sftp ${op} of ${fmtNum(size / MiB, 0)} MiB (median of ${reps})`,
          atrium: a,
          peerName: 'OpenSSH sftp-server',
          peer: o,
          unit: 'MB/s',
          ratio: a / o,
          // issue 25: put ≥ 0.8×, get ≥ 0.9× (issue 8 asked ≥ 0.6× both ways)
          target: `≥ ${op === 'upload' ? '0.80' : '0.90'}× OpenSSH`,
          met: a / o >= (op === 'upload' ? 0.8 : 0.9),
        });
      }
      if (idleRss !== undefined) result.summary.push({ benchmark: 'atrium RSS before the transfers', atrium: idleRss / 1e6, unit: 'MB' });
      result.summary.push({ benchmark: 'atrium peak RSS during the transfers', atrium: peak / 1e6, unit: 'MB', target: 'flat (< idle + 100 MB)', met: idleRss === undefined ? null : peak - idleRss < 100e6 });
      result.raw.runs = runs;
      result.raw.rss_samples_bytes = samples;
      result.environment.loadavg_at_end = `${loadavg().map((v) => v.toFixed(2)).join(' ')} (other work on the machine skews the figures)`;
    } finally {
      removeTempDir(work);
    }
  },
};
