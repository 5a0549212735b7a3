import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchChromium, requireChromium } from '../helpers/browser.js';
import { chromiumEndpoint } from '../helpers/chromium-broker.js';

// The browser tests share one chromium per worker (test/helpers/chromium-broker.ts): each test
// file connects to it and works in contexts of its own. What one file leaves in its contexts
// (cookies, localStorage) must not reach the next file's, as with a browser launched per file.

describe.runIf(requireChromium('the shared-browser isolation test'))('one chromium per worker, a context per test', () => {
  let server: http.Server;
  let base: string;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      if (req.url === '/set') res.setHeader('set-cookie', 'who=first; Path=/');
      res.setHeader('content-type', 'text/html');
      res.end(`<p id=cookie>${req.headers.cookie ?? ''}</p>`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('every file of the worker gets the same browser', async () => {
    const broker = inject('chromiumBroker');
    expect(broker).toBeTypeOf('string');
    expect(await chromiumEndpoint(broker!)).toBe(await chromiumEndpoint(broker!));
    expect(await chromiumEndpoint(broker!)).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\//);
  });

  it("a file's cookies and localStorage are not seen by a later file's contexts", async () => {
    const first = await launchChromium();
    const a = await first.newContext();
    const pa = await a.newPage();
    await pa.goto(`${base}/set`);
    await pa.evaluate(() => window.localStorage.setItem('token', 'first-file'));
    await pa.goto(`${base}/`);
    expect(await pa.textContent('#cookie')).toBe('who=first');
    expect(await pa.evaluate(() => window.localStorage.getItem('token'))).toBe('first-file');

    // Another context of the same connection is a fresh profile too.
    const sibling = await first.newPage();
    await sibling.goto(`${base}/`);
    expect(await sibling.textContent('#cookie')).toBe('');
    expect(await sibling.evaluate(() => window.localStorage.getItem('token'))).toBeNull();

    // The first file ends: its contexts go, the browser stays for the next file.
    await first.close();
    const second = await launchChromium();
    try {
      expect(second.contexts()).toHaveLength(0);
      const pb = await second.newPage();
      await pb.goto(`${base}/`);
      expect(await pb.textContent('#cookie')).toBe('');
      expect(await pb.evaluate(() => window.localStorage.getItem('token'))).toBeNull();
    } finally {
      await second.close();
    }
  });
});
