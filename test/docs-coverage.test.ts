import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli } from '../src/cli/index.js';
import { defaultConfig } from '../src/config/defaults.js';
import { builtinSettings, FLAG } from '../src/settings/defaults.js';
import { BACKENDS } from './helpers/backends.js';
import { startServer, type TestServer } from './helpers/server.js';

/**
 * Everything a user can configure or call must be on some doc page (README.md or docs/*.md;
 * generated lists such as docs/settings.md and docs/routes.md count): a config key, a CLI
 * command, a setting, a route. When this fails, document the new thing, or for settings and
 * routes run `npm run docs:lists` to regenerate the lists.
 */
const docs = [
  readFileSync('README.md', 'utf8'),
  ...readdirSync('docs')
    .filter((f) => f.endsWith('.md'))
    .map((f) => readFileSync(path.join('docs', f), 'utf8')),
].join('\n');
const lines = docs.split('\n');

/** The dotted paths of every leaf of the config (arrays are leaves). */
function configKeys(value: unknown, prefix = ''): string[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [prefix];
  return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) => configKeys(v, prefix ? `${prefix}.${k}` : k));
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A key is documented when it is named whole (`log.level`), or on a line that names a sibling
 * whole and the key's last part on its own, as tables group them (`log.max_size` / `max_backups`);
 * a middle part may stand as a placeholder (`tasks.<kind>.workers`).
 */
function configKeyDocumented(key: string): boolean {
  if (docs.includes(`\`${key}\``)) return true;
  const parts = key.split('.');
  const leaf = parts.pop()!;
  const parent = new RegExp(`\`${parts.map((p) => `(?:${escape(p)}|<\\w+>)`).join('\\.')}\\.[\\w<>.]+\``);
  return lines.some((l) => parent.test(l) && (l.includes(`\`${leaf}\``) || new RegExp(`\`${parts.map((p) => `(?:${escape(p)}|<\\w+>)`).join('\\.')}\\.${escape(leaf)}\``).test(l)));
}

/** `atrium user add`, … every runnable command, as a user types it. */
function commands(cmd: Command, prefix = 'atrium'): string[] {
  return cmd.commands.flatMap((c) => {
    const name = `${prefix} ${c.name()}`;
    return [name, ...commands(c, name)];
  });
}

describe('documentation coverage', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!);
  });
  afterAll(async () => {
    // The storages mount in the background; let that finish before the tables are dropped.
    await s.core.storages.ready();
    await s.destroy();
  });

  it('names every config key', () => {
    const keys = configKeys(defaultConfig());
    expect(keys.length).toBeGreaterThan(50);
    expect(keys.filter((k) => !configKeyDocumented(k))).toEqual([]);
  });

  it('names every CLI command', () => {
    const all = commands(buildCli());
    expect(all).toEqual(expect.arrayContaining(['atrium server', 'atrium user add', 'atrium migrate']));
    expect(all.filter((c) => !docs.includes(`\`${c}`))).toEqual([]);
  });

  it('names every setting', () => {
    const keys = builtinSettings()
      .filter((d) => d.flag !== FLAG.DEPRECATED)
      .map((d) => d.key);
    expect(keys.filter((k) => !docs.includes(`\`${k}\``))).toEqual([]);
  });

  it('names every route', () => {
    const routes = s.app.routeTable.routes.filter((r) => r.method !== 'HEAD' || !s.app.routeTable.routes.some((g) => g.method === 'GET' && g.url === r.url));
    expect(routes.length).toBeGreaterThan(70);
    const documented = (r: { method: string; url: string }) => docs.includes(`\`${r.method} ${r.url}\``);
    expect(routes.filter((r) => !documented(r)).map((r) => `${r.method} ${r.url}`)).toEqual([]);
  });

  it("names every folder of src/ and test/ in development.md's layout", () => {
    const dev = readFileSync('docs/development.md', 'utf8');
    const layout = /## Layout\n\n```\n([\s\S]*?)\n```/.exec(dev)?.[1] ?? '';
    const named = new Set(layout.split('\n').map((l) => /^(\S+)\/\s/.exec(l)?.[1]).filter((d): d is string => d !== undefined));
    expect(named.size).toBeGreaterThan(40);
    const folders = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .flatMap((e) => {
          const p = `${dir}/${e.name}`;
          // A fixture tree is named by its root (test/unit/fixtures/).
          return p.includes('/fixtures/') ? [] : [p, ...folders(p)];
        });
    expect(['src', 'test', ...folders('src'), ...folders('test')].filter((d) => !named.has(d))).toEqual([]);
    expect(named.has('src/no-such-folder')).toBe(false);
  });

  it('can fail: an undocumented name is caught', () => {
    expect(configKeyDocumented('database.no_such_key')).toBe(false);
    expect(configKeyDocumented('log.max_backups')).toBe(true);
    expect(docs.includes('`atrium no-such-command')).toBe(false);
  });
});
