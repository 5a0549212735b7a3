import { rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { BrowserServer, LaunchOptions } from 'playwright-core';

// One chromium per test worker, shared by the test files that worker runs one after another.
//
// vitest runs each test file in a fresh child process (the forks pool), so a browser kept in a
// worker's module state would still be one launch per file. The global setup (the run's main
// process) keeps the browsers instead: it answers on a Unix socket, and the first test file of a
// worker slot (VITEST_POOL_ID) that asks for chromium makes it launch one as a Playwright browser
// server; that file and every later file of the slot connect to it (test/helpers/browser.ts).
// Each connection works in browser contexts of its own (fresh cookies, storage, cache, as a
// browser of its own had) and a connection's contexts close when it closes or its process ends.
// The browsers close at the end of the run. Nothing is launched by a run without browser tests.

export const LAUNCH: LaunchOptions = {
  executablePath: process.env.ATRIUM_TEST_CHROMIUM ?? '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
};

export interface Broker {
  socket: string;
  close(): Promise<void>;
}

/** Starts the broker (in the global setup). Browsers are launched on the first request for a slot. */
export async function startChromiumBroker(): Promise<Broker> {
  const socket = path.join(os.tmpdir(), `atrium-chromium-${process.pid}.sock`);
  rmSync(socket, { force: true });
  const browsers = new Map<string, Promise<BrowserServer>>();
  const launch = (slot: string) => {
    let b = browsers.get(slot);
    if (!b) {
      b = import('playwright-core').then(({ chromium }) => chromium.launchServer(LAUNCH));
      browsers.set(slot, b);
      // A failed launch is tried again by the next file; a crashed browser is replaced.
      b.then((s) => s.process().once('exit', () => browsers.get(slot) === b && browsers.delete(slot))).catch(() => browsers.delete(slot));
    }
    return b;
  };
  const server = http.createServer((req, res) => {
    const slot = /^\/chromium\/([\w-]{1,40})$/.exec(req.url ?? '')?.[1];
    if (!slot) {
      res.writeHead(404).end();
      return;
    }
    launch(slot).then(
      (b) => res.writeHead(200, { 'content-type': 'text/plain' }).end(b.wsEndpoint()),
      (err: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(err.message),
    );
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(socket, resolve));
  return {
    socket,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      const all = await Promise.allSettled([...browsers.values()]);
      await Promise.all(all.map((r) => (r.status === 'fulfilled' ? r.value.close().catch(() => undefined) : undefined)));
      rmSync(socket, { force: true });
    },
  };
}

/** The endpoint of this worker's browser (in a test file), launching it when it is the slot's first. */
export function chromiumEndpoint(socket: string): Promise<string> {
  const slot = process.env.VITEST_POOL_ID ?? String(process.pid);
  return new Promise((resolve, reject) => {
    const req = http.get({ socketPath: socket, path: `/chromium/${slot}` }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`chromium broker: ${body}`))));
    });
    req.on('error', reject);
  });
}
