import path from 'node:path';

// The text format of the original's UrlTree driver: one entry per line, two spaces of
// indentation per level, `Name:` opens a folder, a file line is `[Name:][Size:][Modified:]Url`
// (Modified in Unix seconds; without a name, the URL's last path segment names the file).

export interface UrlNode {
  name: string;
  isDir: boolean;
  children: UrlNode[];
  url?: string;
  /** Bytes, or undefined when the line did not say. */
  size?: number;
  /** Unix seconds, or undefined. */
  modified?: number;
}

function parseFileLine(line: string, lineNo: number): UrlNode {
  let index = line.indexOf('http://');
  if (index === -1) index = line.indexOf('https://');
  if (index === -1) throw new Error(`line ${lineNo}: a file needs an http:// or https:// URL: ${line}`);
  const url = line.slice(index);
  const node: UrlNode = { name: '', isDir: false, children: [], url };
  if (index === 0) {
    let base: string;
    try {
      base = decodeURIComponent(path.posix.basename(new URL(url).pathname));
    } catch {
      throw new Error(`line ${lineNo}: invalid URL ${url}`);
    }
    if (base === '') throw new Error(`line ${lineNo}: ${url} has no file name, write Name:${url}`);
    node.name = base;
    return node;
  }
  const info = line.slice(0, index);
  if (!info.endsWith(':')) throw new Error(`line ${lineNo}: the file information must end with ':': ${line}`);
  const parts = info.slice(0, -1).split(':');
  if (parts[0] === '') throw new Error(`line ${lineNo}: the file name can not be empty: ${line}`);
  node.name = parts[0]!;
  if (parts.length > 1) {
    if (!/^\d+$/.test(parts[1]!)) throw new Error(`line ${lineNo}: the file size must be an integer: ${line}`);
    node.size = Number(parts[1]);
  }
  if (parts.length > 2) {
    if (!/^\d+$/.test(parts[2]!)) throw new Error(`line ${lineNo}: the modified time must be a Unix timestamp: ${line}`);
    node.modified = Number(parts[2]);
  }
  if (parts.length > 3) throw new Error(`line ${lineNo}: too many ':' fields before the URL: ${line}`);
  return node;
}

/** Parses the structure text into a tree whose root is the storage root. */
export function parseUrlTree(text: string): UrlNode {
  const root: UrlNode = { name: '', isDir: true, children: [] };
  const stack: Array<{ node: UrlNode; level: number }> = [{ node: root, level: -1 }];
  for (const [i, raw] of text.replace(/\r/g, '').split('\n').entries()) {
    const indent = raw.length - raw.replace(/^ +/, '').length;
    const line = raw.trim();
    if (line === '') continue;
    if (indent % 2 !== 0) throw new Error(`line ${i + 1}: indentation must be a multiple of 2 spaces: ${raw}`);
    const level = indent / 2;
    while (level <= stack[stack.length - 1]!.level) stack.pop();
    const parent = stack[stack.length - 1]!;
    if (level > parent.level + 1) throw new Error(`line ${i + 1}: indented deeper than its folder: ${raw}`);
    const isFolder = line.endsWith(':') && !line.includes('://');
    const node = isFolder ? { name: line.slice(0, -1), isDir: true, children: [] } : parseFileLine(line, i + 1);
    if (node.name.includes('/') || node.name === '.' || node.name === '..') throw new Error(`line ${i + 1}: invalid name ${node.name}`);
    if (parent.node.children.some((c) => c.name === node.name)) throw new Error(`line ${i + 1}: ${node.name} appears twice in one folder`);
    parent.node.children.push(node);
    if (isFolder) stack.push({ node, level });
  }
  return root;
}

/** The node at a storage path, or undefined. */
export function nodeAt(root: UrlNode, p: string): UrlNode | undefined {
  let node: UrlNode | undefined = root;
  for (const segment of p.split('/').filter(Boolean)) {
    node = node.children.find((c) => c.name === segment);
    if (!node) return undefined;
  }
  return node;
}

/** The structure text of a tree, in the format parseUrlTree reads (what `writable` stores back). */
export function stringifyUrlTree(root: UrlNode): string {
  const lines: string[] = [];
  const walk = (node: UrlNode, depth: number) => {
    for (const c of node.children) {
      const pad = '  '.repeat(depth);
      if (c.isDir) {
        lines.push(`${pad}${c.name}:`);
        walk(c, depth + 1);
        continue;
      }
      const fields = [c.name];
      if (c.size !== undefined || c.modified !== undefined) fields.push(String(c.size ?? 0));
      if (c.modified !== undefined) fields.push(String(c.modified));
      lines.push(`${pad}${fields.join(':')}:${c.url}`);
    }
  };
  walk(root, 0);
  return lines.join('\n');
}

/** A deep copy of a node (folders with their children). */
export function cloneNode(n: UrlNode): UrlNode {
  return { ...n, children: n.children.map(cloneNode) };
}
