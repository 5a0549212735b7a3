// Functions longer than 100 lines in src/ and web/src (issue #40, docs/development.md).
//
// Every function-like node counts: function declarations and expressions, arrow functions,
// methods, constructors and accessors. Its length is the number of source lines its text spans
// (first line of the signature to the closing brace, both included; comments and blank lines
// inside count, as a reader has to scroll past them). A nested function is part of the length of
// the function that contains it and is also measured on its own.
//
// Declarative lists are allowed to be long. The rule: a function is a declarative list when at
// least 80 % of its lines lie inside one single construct that maps values, which is
//   - an object literal or an array literal (a table, which may hold small functions: those
//     are measured on their own), or
//   - a `switch` whose every clause is one line (`case 'a': return 1;`, fall-through labels
//     included).
// Anything else over the limit is logic and has to be split.
//
//   node scripts/long-functions.mjs           the list, logic first; exit 1 when logic exceeds the limit
//   node scripts/long-functions.mjs --json    the same as JSON
//   node scripts/long-functions.mjs --limit=60 --all   another limit; --all lists declarative lists too
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
// TypeScript 7 has no parser in JavaScript: the AST comes from the bundled tsgo through its
// (unstable) synchronous API, one program per tsconfig.json.
import * as ts from 'typescript/unstable/ast';
import { API } from 'typescript/unstable/sync';

export const LIMIT = 100;
export const DECLARATIVE_SHARE = 0.8;

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const ROOTS = ['src', 'web/src'];
const PROJECTS = ['tsconfig.json', 'web/tsconfig.json'];

function sourceFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sourceFiles(p));
    else if (/\.tsx?$/.test(name) && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

function isFunctionLike(node) {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isFunctionExpression(node) ||
    ts.isArrowFunction(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node)
  );
}

function propName(name, sf) {
  if (!name) return undefined;
  if (ts.isIdentifier(name) || ts.isPrivateIdentifier(name) || ts.isStringLiteral(name) || ts.isNumericLiteral(name)) return name.text;
  return name.getText(sf);
}

function className(node, sf) {
  for (let p = node.parent; p; p = p.parent) {
    if (ts.isClassDeclaration(p) || ts.isClassExpression(p)) return p.name ? p.name.text : '(class)';
    if (ts.isObjectLiteralExpression(p)) {
      const holder = p.parent && (ts.isVariableDeclaration(p.parent) || ts.isPropertyAssignment(p.parent)) ? propName(p.parent.name, sf) : undefined;
      return holder;
    }
  }
  return undefined;
}

/** A readable name: `f`, `Class.method`, `x` for `const x = () => …`, `on('session') callback`. */
function functionName(node, sf) {
  if (ts.isConstructorDeclaration(node)) return `${className(node, sf) ?? '(class)'}.constructor`;
  if (ts.isMethodDeclaration(node) || ts.isGetAccessorDeclaration(node) || ts.isSetAccessorDeclaration(node)) {
    const owner = className(node, sf);
    const n = propName(node.name, sf);
    return owner ? `${owner}.${n}` : n;
  }
  if ((ts.isFunctionDeclaration(node) || ts.isFunctionExpression(node)) && node.name) return node.name.text;
  const p = node.parent;
  if (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p)) return propName(p.name, sf);
  if (ts.isBinaryExpression(p) && p.right === node) return p.left.getText(sf);
  if (ts.isCallExpression(p) || ts.isNewExpression(p)) {
    const callee = p.expression.getText(sf).replace(/\s+/g, ' ');
    const first = p.arguments?.[0];
    const label = first && first !== node && ts.isStringLiteralLikeNode(first) ? `(${JSON.stringify(first.text)})` : '()';
    // the enclosing named function helps to find an anonymous callback
    let outer;
    for (let q = p.parent; q; q = q.parent) {
      if (isFunctionLike(q)) {
        outer = functionName(q, sf);
        break;
      }
    }
    return `${outer ? `${outer} > ` : ''}${callee.length > 40 ? `${callee.slice(0, 40)}…` : callee}${label} callback`;
  }
  if (ts.isJsxExpression(p)) return '(JSX callback)';
  return '(anonymous)';
}

const line = (sf, pos) => sf.getLineAndCharacterOfPosition(pos).line;
const span = (sf, node) => line(sf, node.getEnd()) - line(sf, node.getStart(sf)) + 1;

/** A switch whose every clause fits on one line. */
function isOneLineSwitch(node, sf) {
  return ts.isSwitchStatement(node) && node.caseBlock.clauses.every((c) => span(sf, c) === 1);
}

/** The most lines of `fn` inside one object/array literal or one-line-case switch. */
function largestTable(fn, sf) {
  let best = 0;
  const visit = (node) => {
    if (ts.isObjectLiteralExpression(node) || ts.isArrayLiteralExpression(node) || isOneLineSwitch(node, sf)) {
      best = Math.max(best, span(sf, node));
      return; // an inner literal is smaller than this one
    }
    node.forEachChild(visit);
  };
  if (fn.body) fn.body.forEachChild(visit);
  if (fn.body && (ts.isObjectLiteralExpression(fn.body) || ts.isArrayLiteralExpression(fn.body))) best = Math.max(best, span(sf, fn.body));
  return best;
}

/** Every function of at least `limit` + 1 lines, longest first. */
export function longFunctions({ limit = LIMIT, roots = ROOTS } = {}) {
  const api = new API({ cwd: repo });
  try {
    const snapshot = api.updateSnapshot({ openProjects: PROJECTS.map((p) => path.join(repo, p)) });
    const programs = snapshot.getProjects().map((p) => p.program);
    const found = [];
    for (const root of roots) {
      for (const file of sourceFiles(path.join(repo, root))) {
        const sf = programs.map((p) => p.getSourceFile(file)).find(Boolean);
        if (!sf) throw new Error(`${file} is in no tsconfig.json program`);
        const visit = (node) => {
          if (isFunctionLike(node) && node.body) {
            const lines = span(sf, node);
            if (lines > limit) {
              const table = largestTable(node, sf);
              found.push({
                file: path.relative(repo, file),
                line: line(sf, node.getStart(sf)) + 1,
                name: functionName(node, sf),
                lines,
                table,
                declarative: table >= DECLARATIVE_SHARE * lines,
              });
            }
          }
          node.forEachChild(visit);
        };
        visit(sf);
      }
    }
    return found.sort((a, b) => b.lines - a.lines || a.file.localeCompare(b.file) || a.line - b.line);
  } finally {
    api.close();
  }
}

export function format(f) {
  const kind = f.declarative ? `declarative list (${Math.round((100 * f.table) / f.lines)} % in one literal)` : 'logic';
  return `${f.file}:${f.line}  ${f.name}  ${f.lines} lines  ${kind}`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const limitArg = args.find((a) => a.startsWith('--limit='));
  const limit = limitArg ? Number(limitArg.slice('--limit='.length)) : LIMIT;
  const all = longFunctions({ limit });
  const logic = all.filter((f) => !f.declarative);
  const shown = args.includes('--all') ? all : logic;
  if (args.includes('--json')) console.log(JSON.stringify(shown, null, 2));
  else {
    for (const f of shown) console.log(format(f));
    console.log(`${logic.length} logic function(s) over ${limit} lines, ${all.length - logic.length} declarative list(s)`);
  }
  process.exitCode = logic.length ? 1 : 0;
}
