import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module script, without types
import { placeOf, readLayers, violations } from '../../scripts/layers.mjs';

const repo = path.resolve(import.meta.dirname, '../..');
const docs = readFileSync(path.join(repo, 'docs/development.md'), 'utf8');

describe('the layering of src/ that docs/development.md draws', () => {
  it('no import runs upward, between independent fronts, or from a file on no layer', () => {
    expect(violations(path.join(repo, 'src'), docs)).toEqual([]);
  });

  it('reads the layers from the docs and would see an upward arrow (the check is not vacuous)', () => {
    const layers = readLayers(docs) as Array<{ rank: number; name: string; independent: boolean; entries: string[] }>;
    expect(layers.length).toBeGreaterThan(5);
    // a file entry takes its own layer over its folder's
    expect(placeOf(layers, 'tasks/kinds.ts').layer.rank).toBeLessThan(placeOf(layers, 'tasks/manager.ts').layer.rank);
    expect(placeOf(layers, 'drivers/local/index.ts').layer.rank).toBeLessThan(placeOf(layers, 'server/routes/raw.ts').layer.rank);
    // a made-up tree: a driver importing a route, a front importing another front
    const made = `\`\`\`layers\n0 low: util/\n1 mid: drivers/\n2 fronts (independent): server/ protocols/webdav/\n\`\`\`\n`;
    const tmp = path.join(repo, 'test/unit/fixtures/layers');
    const found = violations(tmp, made) as string[];
    expect(found).toEqual([
      'drivers/a.ts -> server/b.ts: layer 1 (mid) imports layer 2 (fronts)',
      'protocols/webdav/c.ts -> server/b.ts: protocols/webdav/ and server/ are independent fronts',
    ]);
  });
});
