import { execFile, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from './helpers/process.js';

const run = promisify(execFile);
const root = path.resolve('.');
const work = mkdtempSync(path.join(os.tmpdir(), 'atrium-pack-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/**
 * What a user does with the package: `npm pack`, then `npm install -g ./atrium-*.tgz` from a
 * clean folder (into a prefix of its own here, not the machine's global one), then runs
 * `atrium server`. Dependencies install from the registry as for any user; better-sqlite3
 * compiles from source on machines without its prebuilt binary, hence the long timeout.
 */
describe('the npm package', () => {
  it('packs, installs globally on a clean folder and serves the API and the built web UI', { timeout: 900_000 }, async () => {
    // The global setup has just built dist/; packing reuses it rather than building twice.
    const packed = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], { cwd: root, maxBuffer: 64 * 1024 * 1024 });
    const [info] = JSON.parse(packed.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
    const files = info!.files.map((f) => f.path);
    expect(files).toEqual(expect.arrayContaining(['bin/atrium.js', 'dist/atrium.js', 'dist/web/index.html', 'package.json']));
    expect(files.some((f) => f.startsWith('dist/web/assets/') && f.endsWith('.js'))).toBe(true);
    // Sources, tests and the data folder stay out.
    expect(files.filter((f) => /^(src|test|web|bench|data)\//.test(f))).toEqual([]);

    const clean = path.join(work, 'clean');
    const prefix = path.join(work, 'prefix');
    mkdirSync(clean);
    const env: NodeJS.ProcessEnv = { ...process.env, npm_config_prefix: prefix, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };
    // Nothing of the checkout may leak into the installed package's resolution.
    delete env.NODE_PATH;
    // Without install scripts: the one a running server needs is better-sqlite3's, which compiles
    // it from source here (no prebuilt binary is reachable), as `npm ci` of the checkout already
    // did; its build is taken from the checkout when the versions match, and made otherwise.
    await run('npm', ['install', '-g', '--prefer-offline', '--ignore-scripts', path.join(work, info!.filename)], { cwd: clean, env, maxBuffer: 64 * 1024 * 1024 });

    const installed = path.join(prefix, 'lib', 'node_modules', 'atrium');
    await nativeSqlite(installed, env);
    expect(existsSync(path.join(installed, 'dist', 'web', 'index.html'))).toBe(true);
    // Production dependencies only: no build or test tooling.
    const modules = readdirSync(path.join(installed, 'node_modules'));
    for (const dev of ['vitest', 'vite', 'typescript', 'esbuild', 'tsx', 'solid-js', 'playwright-core']) expect(modules, dev).not.toContain(dev);

    const bin = path.join(prefix, 'bin', 'atrium');
    const version = await run(bin, ['version'], { cwd: clean, env });
    expect(version.stdout).toMatch(/^Atrium \d+\.\d+\.\d+/);

    const port = await freePort();
    const data = path.join(clean, 'data');
    const child = spawn(bin, ['server', '--data', data, '--port', String(port)], { cwd: clean, env: { ...env, ATRIUM_ADDR: '127.0.0.1', ATRIUM_LOG_ENABLE: 'false' } });
    let out = '';
    child.stdout.on('data', (b) => (out += b));
    child.stderr.on('data', (b) => (out += b));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      const deadline = Date.now() + 30_000;
      while (!out.includes('Atrium is listening')) {
        if (child.exitCode !== null || Date.now() > deadline) throw new Error(`server did not start:\n${out}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const base = `http://127.0.0.1:${port}`;
      const password = /initial password is: (\S+)/.exec(out)?.[1];
      expect(password).toBeTruthy();
      const login = await fetch(`${base}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password }) });
      expect(((await login.json()) as { code: number }).code).toBe(200);

      // The web UI from the package: index.html and the script it loads.
      const page = await fetch(`${base}/`, { headers: { accept: 'text/html' } });
      expect(page.status).toBe(200);
      const html = await page.text();
      const script = /<script[^>]+src="([^"]+\.js)"/.exec(html)?.[1];
      expect(script).toMatch(/\/assets\//);
      const asset = await fetch(new URL(script!, base));
      expect(asset.status).toBe(200);
      expect((await asset.text()).length).toBeGreaterThan(1000);

      // The API reference and its renderer come from the package too.
      expect((await fetch(`${base}/openapi/swagger-ui-bundle.js`)).status).toBe(200);
      const spec = (await (await fetch(`${base}/api/openapi.json`)).json()) as { openapi: string };
      expect(spec.openapi).toBe('3.1.0');
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
    expect(readdirSync(data)).toEqual(expect.arrayContaining(['config.json', 'data.db']));
  });
});

/** Gives the installed package's better-sqlite3 its native build: the checkout's of the same version, or its own compiled. */
async function nativeSqlite(installed: string, env: NodeJS.ProcessEnv): Promise<void> {
  const versionOf = (dir: string) => (JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string }).version;
  const ours = path.join(root, 'node_modules', 'better-sqlite3');
  const theirs = path.join(installed, 'node_modules', 'better-sqlite3');
  const built = path.join(ours, 'build', 'Release', 'better_sqlite3.node');
  if (versionOf(ours) === versionOf(theirs) && existsSync(built)) {
    mkdirSync(path.join(theirs, 'build', 'Release'), { recursive: true });
    cpSync(built, path.join(theirs, 'build', 'Release', 'better_sqlite3.node'));
  } else {
    await run('npm', ['rebuild', 'better-sqlite3'], { cwd: installed, env, maxBuffer: 64 * 1024 * 1024 });
  }
}
