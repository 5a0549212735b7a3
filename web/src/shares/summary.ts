// The message copied with a share link: the `share_summary_content` setting, a template in
// the Handlebars syntax OpenList's front end fills in (`{{id}}`, `{{#each files}}`, `{{#if pwd}}`,
// `{{#unless (eq @index 0)}}`, the helpers `filename` and `dateLocaleString`). Only that
// subset is read here, without evaluating code: text in, text out, bounded by the template.

type Value = unknown;
type Scope = { self: Value; data: Record<string, Value>; vars: Record<string, Value> };

type Node = { kind: 'text'; text: string } | { kind: 'out'; expr: string } | { kind: 'block'; name: 'if' | 'unless' | 'each'; expr: string; body: Node[]; inverse: Node[] };

/** Templates longer than this are not read (the setting is an admin's text, this bounds the work). */
const MAX_TEMPLATE = 20_000;
const MAX_OUTPUT = 100_000;

function parse(template: string): Node[] {
  const root: Node[] = [];
  const stack: Array<{ node: Extract<Node, { kind: 'block' }>; into: Node[] }> = [];
  let into = root;
  const re = /\{\{\s*([#/]?)(else\b)?\s*([^}]*?)\s*\}\}/g;
  let at = 0;
  for (let m = re.exec(template); m; m = re.exec(template)) {
    if (m.index > at) into.push({ kind: 'text', text: template.slice(at, m.index) });
    at = m.index + m[0].length;
    const [, sigil, isElse, rest = ''] = m;
    if (isElse && !sigil) {
      const open = stack[stack.length - 1];
      if (open) into = open.node.inverse;
      continue;
    }
    if (sigil === '#') {
      const space = rest.search(/\s/);
      const name = (space === -1 ? rest : rest.slice(0, space)) as 'if' | 'unless' | 'each';
      const node: Extract<Node, { kind: 'block' }> = { kind: 'block', name, expr: space === -1 ? '' : rest.slice(space + 1).trim(), body: [], inverse: [] };
      into.push(node);
      stack.push({ node, into });
      into = node.body;
      continue;
    }
    if (sigil === '/') {
      const open = stack.pop();
      into = open ? open.into : root;
      continue;
    }
    into.push({ kind: 'out', expr: rest });
  }
  if (at < template.length) into.push({ kind: 'text', text: template.slice(at) });
  return root;
}

/** Splits `a (b c) d` into `['a', '(b c)', 'd']`. */
function words(expr: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of expr) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (/\s/.test(ch) && depth === 0) {
      if (cur) out.push(cur);
      cur = '';
    } else cur += ch;
  }
  if (cur) out.push(cur);
  return out;
}

const basename = (p: string) => p.replace(/\/+$/, '').split('/').pop() || p;

function evaluate(expr: string, scope: Scope): Value {
  const parts = words(expr.trim());
  if (parts.length === 0) return '';
  const [head, ...args] = parts;
  const arg = (i: number) => value(args[i] ?? '', scope);
  switch (head) {
    case 'filename':
      return basename(String(arg(0) ?? ''));
    case 'dateLocaleString': {
      const d = new Date(String(arg(0) ?? ''));
      return Number.isNaN(d.getTime()) ? '' : d.toLocaleString();
    }
    case 'eq':
      return arg(0) === arg(1);
    default:
      return value(head!, scope);
  }
}

function value(token: string, scope: Scope): Value {
  if (token.startsWith('(') && token.endsWith(')')) return evaluate(token.slice(1, -1), scope);
  if (/^-?\d+(\.\d+)?$/.test(token)) return Number(token);
  if (/^(["']).*\1$/.test(token)) return token.slice(1, -1);
  if (token === 'this' || token === '.') return scope.self;
  if (token.startsWith('@')) return scope.vars[token.slice(1)];
  let cur: Value = scope.data;
  for (const key of token.replace(/^this\./, '').split('.')) {
    if (cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, key)) return undefined;
    cur = (cur as Record<string, Value>)[key];
  }
  return cur;
}

const truthy = (v: Value) => (Array.isArray(v) ? v.length > 0 : Boolean(v));

function render(nodes: Node[], scope: Scope, out: string[]): void {
  for (const n of nodes) {
    if (out.length > MAX_OUTPUT) return;
    if (n.kind === 'text') out.push(n.text);
    else if (n.kind === 'out') {
      const v = evaluate(n.expr, scope);
      out.push(v === undefined || v === null || v === false ? '' : String(v));
    } else if (n.name === 'each') {
      const list = evaluate(n.expr, scope);
      if (!Array.isArray(list) || list.length === 0) render(n.inverse, scope, out);
      else list.forEach((item, index) => render(n.body, { ...scope, self: item, vars: { index, first: index === 0, last: index === list.length - 1 } }, out));
    } else {
      const pass = truthy(evaluate(n.expr, scope)) === (n.name === 'if');
      render(pass ? n.body : n.inverse, scope, out);
    }
  }
}

/** The share's fields as the template names them (OpenList's makeTemplateData). */
export interface SummaryData {
  id: string;
  files: string[];
  pwd: string;
  expires: string | null;
  creator: string;
  remark: string;
  site_title: string;
  base_url: string;
}

/** Fills in the summary template; a template over the bound is used as it is. */
export function renderSummary(template: string, data: SummaryData): string {
  if (template.length > MAX_TEMPLATE) return template;
  const out: string[] = [];
  const fields = data as unknown as Record<string, Value>;
  render(parse(template), { self: fields, data: fields, vars: {} }, out);
  return out.join('');
}
