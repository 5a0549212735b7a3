import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { atrium, freePort, startServerProcess } from './helpers/process.js';

const dirs: string[] = [];
function tmp(): string {
  const d = mkdtempSync(path.join(os.tmpdir(), 'atrium-cli-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const startServer = startServerProcess;

async function login(port: number, password: string) {
  const res = await fetch(`http://127.0.0.1:${port}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password }),
  });
  return res.json() as Promise<{ code: number; data: { token: string } | null }>;
}

describe('atrium CLI', () => {
  it('admin set works on a data folder the server never started on, and the server honours it', async () => {
    const data = tmp();
    const set = await atrium('admin', 'set', 'Hunter2-pass', '--data', data);
    expect(set.stdout).toContain('admin password set');
    const port = await freePort();
    const server = await startServer(data, port);
    try {
      // The admin already existed, so no initial password is printed.
      expect(server.out()).not.toContain('initial password');
      expect((await login(port, 'Hunter2-pass')).code).toBe(200);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  it('server prints the initial admin password once, creates config, database and a Local storage at /', async () => {
    const data = tmp();
    const port = await freePort();
    let server = await startServer(data, port);
    const password = /initial password is: (\S+)/.exec(server.out())?.[1];
    expect(password).toMatch(/^[A-Za-z0-9]{8}$/);
    const ping = await fetch(`http://127.0.0.1:${port}/ping`);
    expect(await ping.text()).toBe('pong');
    expect((await login(port, password!)).code).toBe(200);
    await server.stop();
    const config = JSON.parse(readFileSync(path.join(data, 'config.json'), 'utf8'));
    expect(config.database.type).toBe('sqlite3');
    server = await startServer(data, port);
    expect(server.out()).not.toContain('initial password');
    await server.stop();

    const list = await atrium('storage', 'list', '--data', data);
    expect(list.stdout).toMatch(/1\s+\/\s+Local\s+work/);
    expect(list.stdout).toContain('1 storage(s)');
  });

  it('admin random sets a new password that logs in; admin prints the user name', async () => {
    const data = tmp();
    const r = await atrium('admin', 'random', '--data', data);
    const password = /new password: (\S+)/.exec(r.stdout)?.[1];
    expect(password).toMatch(/^[A-Za-z0-9]{8}$/);
    const info = await atrium('admin', '--data', data);
    expect(info.stdout).toContain('admin user: admin');
    const port = await freePort();
    const server = await startServer(data, port);
    try {
      expect((await login(port, password!)).code).toBe(200);
      expect((await login(port, 'wrong')).code).toBe(400);
    } finally {
      await server.stop();
    }
  });

  it('version prints the versions', async () => {
    const r = await atrium('version');
    expect(r.stdout).toMatch(/^Atrium \d+\.\d+\.\d+/);
    expect(r.stdout).toContain('API: v3.');
  });

  it('a bad config file stops every command with a message naming the field, exit code 2', async () => {
    const data = tmp();
    writeFileSync(path.join(data, 'config.json'), JSON.stringify({ scheme: { http_port: 'x' } }));
    for (const args of [['server'], ['admin', 'set', 'p'], ['storage', 'list']]) {
      const err = await atrium(...args, '--data', data).then(
        () => undefined,
        (e: { code: number; stderr: string }) => e,
      );
      expect(err?.code).toBe(2);
      expect(err?.stderr).toContain('field "scheme.http_port" must be an integer');
    }
  });
});
