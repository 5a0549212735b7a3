import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

export const VERSION = {
  /** Atrium's own version (package.json). */
  atrium: pkg.version,
  /** What the `version` setting reports: the API generation clients check for, then ours. */
  apiVersion: `v3.41.0 (Atrium ${pkg.version})`,
};
