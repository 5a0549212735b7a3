import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type BuildOptions, type Metafile } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';

// The server bundle is split so that a default start (Local storage, SQLite, the API) reads
// only the code it runs: these checks build it as scripts/build-server.mjs does, in memory,
// and follow the static imports from dist/atrium.js (what `node bin/atrium.js` loads at start).

const root = path.resolve(import.meta.dirname, '../..');
let meta: Metafile;
/** Inputs (source files, package files) of the outputs loaded at start. */
const atStart = new Set<string>();
/** Packages left to node_modules that the outputs loaded at start import statically. */
const externalsAtStart = new Set<string>();
/** Every input of every output, loaded at start or not. */
const everywhere = new Set<string>();

/**
 * A package file's input as `node_modules/<package>/…`: where node_modules holds links (the CI's
 * second Node line runs on a shadow tree of them), esbuild names the files by their real paths.
 */
function inputName(input: string): string {
  if (/^[\w-]+:/.test(input)) return input; // a plugin's module (namespace:path)
  const at = input.lastIndexOf('node_modules/');
  return at > 0 ? input.slice(at) : input;
}

beforeAll(async () => {
  const { serverBuildOptions } = (await import(pathToFileURL(path.join(root, 'scripts/build-server.mjs')).href)) as { serverBuildOptions: BuildOptions };
  const result = await build({ ...serverBuildOptions, absWorkingDir: root, outdir: path.join(root, 'dist'), write: false, metafile: true, sourcemap: false, logLevel: 'silent' });
  meta = result.metafile;
  const queue = ['dist/atrium.js'];
  const seen = new Set<string>();
  while (queue.length) {
    const out = queue.pop()!;
    if (seen.has(out)) continue;
    seen.add(out);
    for (const input of Object.keys(meta.outputs[out]!.inputs)) atStart.add(inputName(input));
    for (const im of meta.outputs[out]!.imports) {
      if (im.kind !== 'import-statement') continue;
      if (im.external) externalsAtStart.add(im.path);
      else queue.push(im.path);
    }
  }
  for (const out of Object.values(meta.outputs)) for (const input of Object.keys(out.inputs)) everywhere.add(inputName(input));
}, 60_000);

describe('server bundle split', () => {
  const drivers = readdirSync(path.join(root, 'src/drivers'), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name);

  it('loads the Local driver at start and every other driver only when a storage of it mounts', () => {
    expect(drivers.length).toBeGreaterThan(10);
    expect(atStart).toContain('src/drivers/local/index.ts');
    for (const d of drivers.filter((n) => n !== 'local')) {
      expect(atStart, d).not.toContain(`src/drivers/${d}/index.ts`);
      // Its fields and flags are there at start, for the admin driver listings.
      expect(atStart, d).toContain(`src/drivers/${d}/info.ts`);
      // And its implementation is in the build, in a chunk of its own.
      expect(everywhere, d).toContain(`src/drivers/${d}/index.ts`);
    }
  });

  it('loads the SFTP, FTP and S3 fronts only when they are enabled', () => {
    for (const front of ['sftp', 'ftp', 's3']) {
      expect([...atStart].filter((f) => f.startsWith(`src/protocols/${front}/`)), front).toEqual([]);
      expect(everywhere, front).toContain(`src/protocols/${front}/server.ts`);
    }
    for (const pkg of ['fast-xml-parser', 'ssh2', '@aws-sdk/client-s3', 'basic-ftp', 'webdav', 'bullmq', 'ioredis', 'sharp', 'ldapts', 'yazl', '@zip.js/zip.js', 'tar-stream', 'node-unrar-js', 'libsodium-wrappers', '@azure/storage-blob', 'node-smb2']) {
      expect(externalsAtStart, pkg).not.toContain(pkg);
    }
  });

  it('builds zod with its English messages only', () => {
    // The locales' index is the plugin's one-line module; of the language files, English alone.
    const locales = [...everywhere].filter((f) => f.startsWith('node_modules/zod/v4/locales/'));
    expect(locales).toEqual(['node_modules/zod/v4/locales/en.js']);
  });

  it("leaves Fastify's schema compilers out of the bundle, loaded when a route first compiles a schema", async () => {
    // (Fastify's precompiled error serializer keeps fast-json-stringify's small runtime helpers.)
    for (const pkg of ['ajv', '@fastify/ajv-compiler', '@fastify/fast-json-stringify-compiler']) {
      expect([...everywhere].filter((f) => f.startsWith(`node_modules/${pkg}/`)), pkg).toEqual([]);
    }
    expect(everywhere).not.toContain('node_modules/fast-json-stringify/index.js');
    // A bundle built the same way whose app has JSON-schema routes: validation and serialisation work.
    const { serverBuildOptions } = (await import(pathToFileURL(path.join(root, 'scripts/build-server.mjs')).href)) as { serverBuildOptions: BuildOptions };
    const out = mkdtempSync(path.join(root, 'node_modules/.atrium-test-schema-'));
    try {
      const probe = `import Fastify from 'fastify';
export async function probe() {
  const app = Fastify();
  app.post('/v', { schema: { body: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } }, response: { 200: { type: 'object', properties: { n: { type: 'integer' } } } } } }, async (req) => ({ n: req.body.n + 1, secret: 'dropped' }));
  const good = await app.inject({ method: 'POST', url: '/v', payload: { n: 1 } });
  const bad = await app.inject({ method: 'POST', url: '/v', payload: { n: 'x' } });
  await app.close();
  return { good: [good.statusCode, good.body], bad: [bad.statusCode, bad.json().message] };
}`;
      await build({ ...serverBuildOptions, entryPoints: undefined, stdin: { contents: probe, resolveDir: root, sourcefile: 'probe.ts', loader: 'ts' }, splitting: false, outfile: path.join(out, 'probe.js'), absWorkingDir: root, sourcemap: false, logLevel: 'silent' });
      const { probe: run } = (await import(pathToFileURL(path.join(out, 'probe.js')).href)) as { probe: () => Promise<{ good: [number, string]; bad: [number, string] }> };
      const r = await run();
      expect(r.good).toEqual([200, '{"n":2}']);
      expect(r.bad[0]).toBe(400);
      expect(r.bad[1]).toMatch(/body\/n must be integer/);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 60_000);
});
