import type { TestProject } from 'vitest/node';
// @ts-expect-error: a plain .mjs script without types
import { buildIfChanged } from '../scripts/build-if-changed.mjs';
import { startChromiumBroker } from './helpers/chromium-broker.js';

/**
 * The CLI tests run the real `bin/atrium.js`, so the bundle must match the sources: build it,
 * unless dist/ was already built from exactly these sources (scripts/build-if-changed.mjs keeps a
 * hash of src/, web/, scripts/, bin/ and the package files in dist/.build-hash; `npm ci` /
 * `npm install` build through it in `prepare`, so a CI run builds once).
 *
 * It also keeps the browser tests' chromiums, one per worker, launched when a worker's first
 * browser test asks and closed when the run ends (test/helpers/chromium-broker.ts).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // Runs that touch neither the CLI nor the web UI may skip it (several people building at once share dist/).
  if (process.env.ATRIUM_TEST_FORCE_BUILD === '1') buildIfChanged({ force: true });
  else if (process.env.ATRIUM_TEST_NO_BUILD !== '1') buildIfChanged();
  const broker = await startChromiumBroker();
  project.provide('chromiumBroker', broker.socket);
  return () => broker.close();
}
