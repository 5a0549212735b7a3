// The folder layering of src/, as docs/development.md draws it in its ```layers block: each line
// `N name: entries…` puts folders (`fs/`) and files (`errors.ts`, `tasks/kinds.ts`) on layer N.
// A module may import its own layer and every lower one; a file listed by itself takes its
// layer over its folder's. On a layer marked `(independent)` the entries are separate fronts:
// none imports another (what they share lives on a lower layer).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { importGraph } from './import-graph.mjs';

/** The layers of the docs' ```layers block: [{ rank, name, independent, entries }]. */
export function readLayers(markdown) {
  const block = /```layers\n([\s\S]*?)```/.exec(markdown);
  if (!block) throw new Error('docs/development.md has no ```layers block');
  const layers = [];
  for (const line of block[1].split('\n')) {
    const m = /^\s*(\d+)\s+([^:]+):\s*(.*)$/.exec(line);
    if (!m) continue;
    layers.push({ rank: Number(m[1]), name: m[2].replace('(independent)', '').trim(), independent: m[2].includes('(independent)'), entries: m[3].split(/\s+/).filter(Boolean) });
  }
  return layers;
}

/** The entry (and its layer) a source file belongs to: a file entry first, else its deepest folder entry. */
export function placeOf(layers, rel) {
  let best;
  for (const layer of layers) {
    for (const e of layer.entries) {
      const hit = e.endsWith('/') ? rel.startsWith(e) : rel === e;
      if (!hit) continue;
      const weight = e.endsWith('/') ? e.length : Infinity;
      if (!best || weight > best.weight) best = { entry: e, layer, weight };
    }
  }
  return best;
}

/**
 * Every import that runs against the layering: to a higher layer, between two entries of an
 * independent layer, or from or to a file no entry places.
 */
export function violations(root, markdown) {
  const layers = readLayers(markdown);
  const out = [];
  for (const [file, deps] of importGraph(root)) {
    const from = path.relative(root, file);
    const a = placeOf(layers, from);
    if (!a) {
      out.push(`${from}: on no layer`);
      continue;
    }
    for (const dep of deps) {
      const to = path.relative(root, dep);
      const b = placeOf(layers, to);
      if (!b) continue; // reported as its own file
      if (b.layer.rank > a.layer.rank) out.push(`${from} -> ${to}: layer ${a.layer.rank} (${a.layer.name}) imports layer ${b.layer.rank} (${b.layer.name})`);
      else if (b.layer === a.layer && a.layer.independent && a.entry !== b.entry) out.push(`${from} -> ${to}: ${a.entry} and ${b.entry} are independent fronts`);
    }
  }
  return out;
}

if (process.argv[1] && import.meta.url.endsWith(path.basename(process.argv[1]))) {
  const root = path.resolve('src');
  const found = violations(root, readFileSync('docs/development.md', 'utf8'));
  for (const v of found) console.log(v);
  console.log(`${found.length} imports against the layering`);
}
