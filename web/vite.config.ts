import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import solid from 'vite-plugin-solid';

// Built into dist/web, served by src/server/web.ts. Asset URLs in index.html are written as
// /assets/… and rewritten at serve time to the base path or CDN; chunks loaded from JS are
// resolved against window.ATRIUM.asset_base for the same reason.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  plugins: [solid()],
  base: '/',
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    target: 'es2020',
    sourcemap: false,
    reportCompressedSize: false,
  },
  experimental: {
    renderBuiltUrl(filename, { hostType }) {
      if (hostType === 'js') return { runtime: `window.ATRIUM.asset_base+${JSON.stringify(filename)}` };
      return { relative: hostType === 'css' };
    },
  },
});
