// Builds dist/atrium.js: the server and the pure-JavaScript packages it always loads (Fastify,
// Kysely, zod, pino, jose…) in one minified file, so that start-up reads one file instead of
// hundreds of modules (about half the time to the first answer and 10 MB less memory).
// Packages with native code, and those loaded only when a feature is used (drivers, cluster
// mode, thumbnails, WebDAV XML bodies, crypt, LDAP logins, zip downloads), stay in node_modules and load on first use.
//
// Code splitting: every dynamic `import()` in src/ becomes a chunk of its own next to it in dist/
// (same folder, so that paths made from `import.meta.url` stay right),
// read only when that code first runs (the SFTP, FTP and S3 fronts when enabled, each storage
// driver other than Local when a storage of it is mounted). dist/atrium.js and the chunks it
// imports keep what a default start runs; docs/development.md lists the seams, and
// test/unit/bundle-split.test.ts checks them with the options exported here.
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

/** Left to node_modules: native code, or loaded lazily (keeping them out keeps them off the heap). */
export const EXTERNAL = [
  'better-sqlite3',
  'sharp',
  'ssh2',
  '@aws-sdk/*',
  'bullmq',
  'ioredis',
  'pg',
  'mysql2',
  'basic-ftp',
  'webdav',
  'libsodium-wrappers',
  'fast-xml-parser',
  'qrcode',
  'mime-types',
  '@azure/storage-blob',
  'node-smb2',
  'fontoxpath',
  '@xmldom/xmldom',
  '@zip.js/zip.js',
  'tar-stream',
  'ldapts',
  'yazl',
  'node-unrar-js',
];

/**
 * zod's `z.locales` namespace holds its error messages in ~50 languages (~300 KB of the bundle,
 * parsed at every start). Atrium only uses the English ones (zod's default), so the namespace
 * is built with English alone; `z.locales.en` and every message stay as they are.
 */
export const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(b) {
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]v4[\\/](classic|core)$/.test(args.resolveDir) ? { path: path.join(args.resolveDir, '../locales/index.js'), namespace: 'zod-locales' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'zod-locales' }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(path.join(path.dirname(args.path), 'en.js'))};`,
      resolveDir: path.dirname(args.path),
      loader: 'js',
    }));
  },
};

/**
 * Fastify makes its JSON-schema compilers (Ajv for validation, fast-json-stringify for
 * serialisation: ~400 KB of code, ~40 ms of CPU to evaluate) when the app is created, but
 * Atrium's routes validate with zod and declare no Fastify schema. Where Fastify's schema
 * controller requires them, these stand-ins return the same factories, which require the real
 * package the first time a route's schema is compiled: from node_modules, resolved from
 * Fastify's own folder as Fastify's require would, so that the bundle does not carry (and V8
 * does not parse at every start) code a default server never runs.
 */
export const lazySchemaCompilers = {
  name: 'lazy-schema-compilers',
  setup(b) {
    b.onResolve({ filter: /^@fastify\/(ajv-compiler|fast-json-stringify-compiler)$/ }, (args) =>
      /[\\/]fastify[\\/]lib[\\/]schema-controller\.js$/.test(args.importer) ? { path: args.path, namespace: 'lazy-schema-compiler' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'lazy-schema-compiler' }, (args) => ({
      contents: `const { createRequire } = require('node:module');
let selector;
module.exports = function lazySelector(...options) {
  let built;
  return function (...args) {
    built ??= (selector ??= createRequire(require.resolve('fastify'))(${JSON.stringify(args.path)}))(...options);
    return built(...args);
  };
};`,
      loader: 'js',
    }));
  },
};

/**
 * Node built-in modules that packages require at their top for features Atrium does not use at
 * start: Fastify's server module for its `http2` and `https` options (never set: Atrium makes
 * its HTTPS server itself), prom-client's Pushgateway client (never used). Loading HTTP/2 adds
 * ~2.5 MB of memory to a process, HTTPS and TLS ~1 MB. Each such `require` becomes an object
 * with the functions the file calls on the module, which load it when first called. The build
 * fails if a line is gone or the file uses another member, rather than quietly keeping it.
 */
export const LAZY_BUILTINS = [
  { file: 'fastify/lib/server.js', line: "const http2 = require('node:http2')", name: 'http2', calls: ['createServer', 'createSecureServer'] },
  { file: 'fastify/lib/server.js', line: "const https = require('node:https')", name: 'https', calls: ['createServer'] },
  { file: 'prom-client/lib/pushgateway.js', line: "const https = require('https');", name: 'https', calls: ['request'], value: 'httpModule' },
];

export const lazyBuiltins = {
  name: 'lazy-builtins',
  setup(b) {
    const files = [...new Set(LAZY_BUILTINS.map((l) => l.file))];
    const filter = new RegExp(`[\\\\/]node_modules[\\\\/](${files.map((f) => f.replace(/[.]/g, '\\.').replace(/\//g, '[\\\\/]')).join('|')})$`);
    b.onLoad({ filter }, async (args) => {
      let src = await readFile(args.path, 'utf8');
      for (const l of LAZY_BUILTINS.filter((x) => args.path.replace(/\\/g, '/').endsWith(`node_modules/${x.file}`))) {
        if (src.split(l.line).length !== 2) throw new Error(`${args.path}: "${l.line}" not found once (lazyBuiltins in scripts/build-server.mjs)`);
        const module = /require\('([^']+)'\)/.exec(l.line)[1];
        const rest = src.replace(l.line, '');
        // Members used on the module (and on the variable it is passed through), type names in comments aside.
        const used = [...rest.matchAll(new RegExp(`\\b(?:${l.name}${l.value ? `|${l.value}` : ''})\\.([a-z]\\w*)`, 'g'))].map((m) => m[1]);
        const other = used.filter((m) => !l.calls.includes(m));
        if (other.length > 0) throw new Error(`${args.path}: uses ${l.name}.${other[0]}, not made lazy (lazyBuiltins in scripts/build-server.mjs)`);
        const loaded = `${l.name}Loaded`;
        const members = l.calls.map((c) => `  ${c}: (...args) => (${loaded} ??= require('${module}')).${c}(...args)`).join(',\n');
        src = src.replace(l.line, `let ${loaded}\nconst ${l.name} = {\n${members}\n}`);
      }
      return { contents: src, loader: 'js' };
    });
  },
};

/** esbuild's options for the server; the caller adds `outdir` (and whether to write). */
export const serverBuildOptions = {
  entryPoints: { atrium: 'src/main.ts' },
  bundle: true,
  splitting: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: EXTERNAL,
  plugins: [zodEnglishOnly, lazySchemaCompilers, lazyBuiltins],
  // CommonJS packages inside an ES module bundle call `require`.
  banner: { js: "import { createRequire as __atriumRequire } from 'node:module'; const require = __atriumRequire(import.meta.url);" },
  // No comments or blank space: the source V8 keeps in memory stays small and one byte per
  // character (a single non-Latin-1 character in a comment would double it).
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'external',
  sourcemap: true,
  chunkNames: '[name]-[hash]',
  logLevel: 'warning',
};

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  // Chunks of an earlier build would otherwise pile up (their names carry a content hash).
  mkdirSync('dist', { recursive: true });
  const CHUNK = /^[\w.]+-[A-Z0-9]{8}\.js(\.map|\.LEGAL\.txt)?$/;
  for (const e of readdirSync('dist', { withFileTypes: true })) if (e.isFile() && CHUNK.test(e.name)) rmSync(path.join('dist', e.name));
  await build({ ...serverBuildOptions, outdir: 'dist' });
}

