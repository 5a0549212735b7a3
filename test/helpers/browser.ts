import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';

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

/** A headless chromium kept off the network (a fresh profile per launch). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
}

/** Screenshots go to test-results/screenshots (gitignored), to look at after a run. */
export const SHOTS = path.resolve('test-results/screenshots');
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: false });
}
