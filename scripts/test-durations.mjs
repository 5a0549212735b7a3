// Writes test/durations.json from a vitest JSON report (ATRIUM_TEST_REPORT=... npm test): the
// seconds each test file took, for the files of 5 s or more. The test sequencer
// (test/sequencer.ts) starts the longest files first, so that on a fresh clone (no vitest cache)
// a long file does not begin near the end of the run and leave the other workers idle.
// Usage: node scripts/test-durations.mjs REPORT.json
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const report = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const root = path.resolve('.');
const out = {};
for (const f of report.testResults) {
  const seconds = Math.round((f.endTime - f.startTime) / 1000);
  if (seconds >= 5) out[path.relative(root, f.name)] = seconds;
}
const sorted = Object.fromEntries(Object.entries(out).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])));
writeFileSync('test/durations.json', `${JSON.stringify(sorted, null, 2)}\n`);
console.log(`test/durations.json: ${Object.keys(sorted).length} files`);
