import { lazyRequire } from '../../util/lazy-require.js';

/** fontoxpath, loaded when an autoindex storage first reads a page (most servers mount none). */
const fontoxpath = lazyRequire<typeof import('fontoxpath')>('fontoxpath');

/** What an XPath gives for one item: its string value (the first node's, for node sequences). */
export type XPathString = string | undefined;

const XHTML = 'http://www.w3.org/1999/xhtml';
// The HTML parser puts elements in the XHTML namespace: unprefixed names in expressions mean it.
const OPTIONS = { namespaceResolver: (prefix: string) => (prefix === '' ? XHTML : null) };

/** Nodes an expression selects (the items of an index page). */
export function compileNodesXPath(expr: string): (node: Node) => Node[] {
  check(expr);
  return (node) => fontoxpath().evaluateXPathToNodes(expr, node, null, null, OPTIONS) as Node[];
}

/**
 * A string an expression gives relative to an item, as OpenList reads it: a string result as it
 * is, or the value of the first node selected; empty is undefined.
 */
export function compileStringXPath(expr: string): (node: Node) => XPathString {
  check(expr);
  return (node) => {
    const r: unknown = fontoxpath().evaluateXPath(expr, node, null, null, fontoxpath().evaluateXPath.ANY_TYPE, OPTIONS);
    const first = Array.isArray(r) ? r[0] : r;
    if (first === undefined || first === null) return undefined;
    const s = typeof first === 'object' ? ((first as Attr).value ?? (first as Node).textContent ?? '') : String(first);
    return s === '' ? undefined : s;
  };
}

/** Throws on a syntax error (static errors only: dynamic ones depend on the page). */
function check(expr: string): void {
  try {
    fontoxpath().evaluateXPath(expr, null, null, null, fontoxpath().evaluateXPath.ANY_TYPE, OPTIONS);
  } catch (err) {
    const message = (err as Error).message;
    if (/^XPST|XPST\d{4}|syntax/i.test(message)) throw new Error(message.split('\n')[0]);
  }
}
