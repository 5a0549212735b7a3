import path from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module script, without types
import { cycles, importGraph } from '../../scripts/import-graph.mjs';

const root = path.resolve(import.meta.dirname, '../../src');

describe('the import graph of src/', () => {
  it('has no cycle, type imports included', () => {
    const graph = importGraph(root) as Map<string, Set<string>>;
    const found = (cycles(graph) as string[][]).map((c) => c.map((f) => path.relative(root, f)).join(' <-> '));
    expect(found).toEqual([]);
  });

  it('sees the imports it checks (the check is not vacuous)', () => {
    const graph = importGraph(root) as Map<string, Set<string>>;
    expect(graph.size).toBeGreaterThan(200);
    expect([...graph.get(path.join(root, 'core.ts'))!].map((f) => path.relative(root, f))).toContain('view/view.ts');
    // a cycle made up in memory is found
    const a = path.join(root, 'a.ts');
    const b = path.join(root, 'b.ts');
    expect(cycles(new Map([[a, new Set([b])], [b, new Set([a])]]))).toHaveLength(1);
  });
});
