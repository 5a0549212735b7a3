// Builds dist/atrium.js: the server and the pure-JavaScript packages it always loads (Fastify,
// Kysely, zod, pino, jose…) in one minified file, so that start-up reads one file instead of
// hundreds of modules (about half the time to the first answer and 10 MB less memory).
// Packages with native code, and those loaded only when a feature is used (drivers, cluster
// mode, thumbnails, WebDAV XML bodies, crypt, LDAP logins, zip downloads), stay in node_modules and load on first use.
import { build } from 'esbuild';

/** Left to node_modules: native code, or loaded lazily (keeping them out keeps them off the heap). */
const EXTERNAL = [
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

await build({
  entryPoints: ['src/main.ts'],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: EXTERNAL,
  // CommonJS packages inside an ES module bundle call `require`.
  banner: { js: "import { createRequire as __atriumRequire } from 'node:module'; const require = __atriumRequire(import.meta.url);" },
  // No comments or blank space: the source V8 keeps in memory stays small and one byte per
  // character (a single non-Latin-1 character in a comment would double it).
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'external',
  sourcemap: true,
  outfile: 'dist/atrium.js',
  logLevel: 'warning',
});
