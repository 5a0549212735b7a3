import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance, InjectOptions } from 'fastify';
import type { Response as InjectResponse } from 'light-my-request';
import { loadConfig } from '../../src/config/load.js';
import { bootstrap, type Core, type OpenOptions, openCore } from '../../src/core.js';
import { dropAll } from '../../src/db/migrations.js';
import { buildApp } from '../../src/server/app.js';
import type { Backend } from './backends.js';
import { cloneMigrated } from './db-template.js';
import pino from 'pino';
import { afterAll, beforeAll } from 'vitest';

export const ADMIN_PASSWORD = 'admin-pass-1';

export interface TestServer {
  app: FastifyInstance;
  core: Core;
  dataDir: string;
  /** Sends a request and returns the parsed JSON envelope (asserting HTTP 200). */
  api(method: string, url: string, opts?: { body?: unknown; token?: string; headers?: Record<string, string>; query?: Record<string, string> }): Promise<{ code: number; message: string; data: any }>;
  login(username?: string, password?: string): Promise<string>;
  inject(opts: InjectOptions): Promise<InjectResponse>;
  /** Closes the app and the database, keeping the data (for restart tests). */
  stop(): Promise<void>;
  /** A new process-like instance on the same data folder and database. */
  restart(): Promise<TestServer>;
  /** Stops and removes everything this instance created. */
  destroy(): Promise<void>;
}

export interface TestServerOptions {
  config?: Record<string, unknown>;
  /** Reuse a data folder (restart tests). */
  dataDir?: string;
  prefix?: string;
  /** Service options (task retry waits, tool poll interval) for faster tests. */
  core?: Pick<OpenOptions, 'offline' | 'tasks' | 'hooks'>;
  /**
   * Run every migration on the new prefix, as a real first start does, instead of copying the
   * engine's migrated template (test/helpers/db-template.ts). ATRIUM_TEST_MIGRATE=1 does it for
   * every server. A server given a `prefix` or a `dataDir` always migrates (it may share tables).
   */
  migrate?: boolean;
}

export async function startServer(backend: Backend, opts: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = opts.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'atrium-test-'));
  const prefix = opts.prefix ?? `t${Math.random().toString(36).slice(2, 10)}_`;
  if (!opts.dataDir) {
    const config = {
      database: backend.database(prefix, dataDir),
      log: { enable: false },
      ...opts.config,
    };
    writeFileSync(path.join(dataDir, 'config.json'), JSON.stringify(config));
  }
  const loaded = loadConfig(dataDir, {});
  // A new prefix of its own: copy the template the migrations made once for this engine; bootstrap's migrate then finds every version applied.
  // (A template of other migrations than this process's is not copied: bootstrap migrates then.)
  if (!opts.dataDir && !opts.prefix && !opts.migrate && process.env.ATRIUM_TEST_MIGRATE !== '1') await cloneMigrated(loaded.config.database);
  const core = openCore(loaded, { ...opts.core, log: pino({ level: process.env.ATRIUM_TEST_LOG ?? 'silent' }) });
  await bootstrap(core, { adminPassword: ADMIN_PASSWORD });
  const app = await buildApp(core);

  const server: TestServer = {
    app,
    core,
    dataDir,
    inject: (o) => app.inject(o),
    async api(method, url, o = {}) {
      const headers: Record<string, string> = { ...o.headers };
      if (o.token !== undefined) headers.authorization = o.token;
      let payload: string | undefined;
      if (o.body !== undefined) {
        payload = typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
        headers['content-type'] ??= 'application/json';
      }
      const res = await app.inject({ method: method as InjectOptions['method'], url, headers, payload, query: o.query });
      if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode} for ${method} ${url}: ${res.body}`);
      return res.json();
    },
    async login(username = 'admin', password = ADMIN_PASSWORD) {
      const r = await server.api('POST', '/api/auth/login', { body: { username, password } });
      if (r.code !== 200) throw new Error(`login failed: ${r.message}`);
      return r.data.token as string;
    },
    async stop() {
      await app.close();
      await core.close();
    },
    async restart() {
      await server.stop();
      return startServer(backend, { dataDir, prefix, core: opts.core });
    },
    async destroy() {
      await app.close();
      // Storages still mounting in the background write their status: let them finish before the tables go.
      await core.storages.ready();
      await dropAll(core.db);
      await core.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return server;
}

/** A server for the enclosing suite: started before its tests (`ready` gets it and the admin's token), destroyed after them. */
export function serverForSuite(backend: Backend, ready: (s: TestServer, admin: string) => void, opts: TestServerOptions = {}): void {
  let s: TestServer | undefined;
  beforeAll(async () => {
    s = await startServer(backend, opts);
    ready(s, await s.login());
  });
  afterAll(async () => {
    await s?.destroy();
  });
}
