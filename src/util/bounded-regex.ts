import { Worker } from 'node:worker_threads';
import { BadRequest } from '../errors.js';

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { source, replacement, names } = workerData;
const re = new RegExp(source, 'u');
parentPort.postMessage(names.map((n) => (re.test(n) ? n.replace(re, replacement) : null)));
`;

/** Go (RE2) regex and replacement syntax to JavaScript's: (?P<n>…), ${n} and ${1}. */
export function goRegexToJs(source: string, replacement: string): { source: string; replacement: string } {
  return {
    source: source.replace(/\(\?P</g, '(?<'),
    replacement: replacement.replace(/\$\{(\d+)\}/g, '$$$1').replace(/\$\{([A-Za-z_]\w*)\}/g, '$$<$1>'),
  };
}

/**
 * Applies `source` → `replacement` (first match) to every name, in a worker that is stopped
 * after `timeoutMs`: a catastrophic pattern fails the request instead of freezing the server.
 * Returns the new name for each matching name, null for the others.
 */
export async function replaceAll(sourceGo: string, replacementGo: string, names: string[], timeoutMs = 2000): Promise<Array<string | null>> {
  const { source, replacement } = goRegexToJs(sourceGo, replacementGo);
  try {
    new RegExp(source, 'u');
  } catch (err) {
    throw new BadRequest(`invalid regular expression: ${(err as Error).message}`);
  }
  const worker = new Worker(WORKER, { eval: true, workerData: { source, replacement, names }, resourceLimits: { maxOldGenerationSizeMb: 64 } });
  try {
    return await new Promise<Array<string | null>>((resolve, reject) => {
      const timer = setTimeout(() => reject(new BadRequest(`regular expression took longer than ${timeoutMs} ms`)), timeoutMs);
      worker.once('message', (m: Array<string | null>) => {
        clearTimeout(timer);
        resolve(m);
      });
      worker.once('error', (err) => {
        clearTimeout(timer);
        reject(new BadRequest(`regular expression failed: ${err.message}`));
      });
    });
  } finally {
    await worker.terminate();
  }
}
