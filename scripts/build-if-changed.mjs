// Runs `npm run build` only when its inputs changed since the last build of this dist/.
//
// The inputs are every file under src/, web/, scripts/ and bin/, plus package.json,
// package-lock.json and tsconfig.json (path and content, so a rename, an edit, an added or a
// removed file all count), and the Node version. Their SHA-256 is written to dist/.build-hash
// after a successful build; a run whose hash matches, and whose dist/ still holds the server
// bundle and the web UI, skips the build. The hash is taken before the build starts, so a file
// changed while it ran makes the next run build again.
//
//   node scripts/build-if-changed.mjs           build if needed
//   node scripts/build-if-changed.mjs --hash    print the inputs' hash
//   node scripts/build-if-changed.mjs --force   build in any case (and record the hash)
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIRS = ['src', 'web', 'scripts', 'bin'];
const FILES = ['package.json', 'package-lock.json', 'tsconfig.json'];
export const HASH_FILE = path.join(ROOT, 'dist', '.build-hash');

function walk(dir, out) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules') continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(full, out);
    else if (entry.isFile()) out.push(full);
  }
  return out;
}

export function inputsHash() {
  const files = [];
  for (const d of DIRS) if (existsSync(path.join(ROOT, d))) walk(path.join(ROOT, d), files);
  for (const f of FILES) if (existsSync(path.join(ROOT, f))) files.push(path.join(ROOT, f));
  files.sort();
  const h = createHash('sha256').update(`node ${process.version}\0`);
  for (const f of files) {
    h.update(path.relative(ROOT, f).split(path.sep).join('/')).update('\0');
    h.update(readFileSync(f)).update('\0');
  }
  return h.digest('hex');
}

/** Builds unless dist/ was built from exactly these inputs; returns true when it built. */
export function buildIfChanged({ force = false, log = console.log } = {}) {
  const hash = inputsHash();
  const built = existsSync(path.join(ROOT, 'dist', 'atrium.js')) && existsSync(path.join(ROOT, 'dist', 'web', 'index.html'));
  const previous = existsSync(HASH_FILE) ? readFileSync(HASH_FILE, 'utf8').trim() : '';
  if (!force && built && previous === hash) {
    log(`dist/ is up to date with the sources (build hash ${hash.slice(0, 12)}), not rebuilding`);
    return false;
  }
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
  writeFileSync(HASH_FILE, `${hash}\n`);
  return true;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--hash')) console.log(inputsHash());
  else buildIfChanged({ force: process.argv.includes('--force') });
}
