import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Browser, chromium, type Download, type Page } from 'playwright-core';
import { inject } from 'vitest';
import { chromiumEndpoint, LAUNCH } from './chromium-broker.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The global setup's chromium broker (test/helpers/chromium-broker.ts). */
    chromiumBroker?: string;
  }
}

/** Debian's chromium (playwright cannot download browsers here; .ci/packages.sh installs it). */
export const CHROMIUM = process.env.ATRIUM_TEST_CHROMIUM ?? '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);

/** Under CI a missing chromium fails the run; elsewhere the browser tests are skipped, loudly. */
export function requireChromium(what: string): boolean {
  if (hasChromium) return true;
  if (process.env.CI) throw new Error(`CI needs chromium at ${CHROMIUM} for ${what} (.ci/packages.sh installs it)`);
  console.warn(`\n*** SKIPPING ${what}: no chromium at ${CHROMIUM} ***\n`);
  return false;
}

/**
 * A headless chromium kept off the network. In a vitest run, the worker's shared browser (one per
 * worker, launched at its first browser test file and closed at the end of the run;
 * test/helpers/chromium-broker.ts), connected to: everything a file makes in it is a browser
 * context of its own (`newContext`, or `newPage`'s own context), a fresh profile as a browser
 * launched for the file had, and `close()` closes this connection's contexts, not the browser.
 * Outside the global setup (another config), a browser of its own.
 */
export async function launchChromium(): Promise<Browser> {
  const broker = inject('chromiumBroker');
  if (!broker) return chromium.launch(LAUNCH);
  return chromium.connect(await chromiumEndpoint(broker));
}

/** A download's file on disk (the shared browser is connected to, where `download.path()` is not available). */
export async function savedDownload(download: Download): Promise<string> {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'atrium-download-')), download.suggestedFilename() || 'download');
  await download.saveAs(file);
  return file;
}

/** Screenshots go to test-results/screenshots (gitignored), to look at after a run. */
export const SHOTS = path.resolve('test-results/screenshots');
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: false });
}
