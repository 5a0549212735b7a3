import type * as Fxp from 'fast-xml-parser';
import { lazyRequire } from '../../util/lazy-require.js';

export const DAV = 'DAV:';

/** An XML element with its namespace resolved. */
export interface XmlElement {
  ns: string;
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  /** Text directly inside the element. */
  text: string;
}

export class XmlError extends Error {}

/** Loaded by the first WebDAV request with a body (most servers never get one). */
const loadFxp = lazyRequire<typeof Fxp>('fast-xml-parser');
let parser: Fxp.XMLParser | undefined;

const newParser = () => new (loadFxp().XMLParser)({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  processEntities: true,
  // Also decodes numeric character references (&#65536;), which the XML mode leaves as text.
  htmlEntities: true,
});

type RawNode = Record<string, unknown>;

function convert(node: RawNode, scope: Map<string, string>): XmlElement | undefined {
  const tag = Object.keys(node).find((k) => k !== ':@');
  if (!tag || tag.startsWith('#') || tag.startsWith('?')) return undefined;
  const rawAttrs = (node[':@'] ?? {}) as Record<string, string>;
  const local = new Map(scope);
  const attrs: Record<string, string> = {};
  for (const [k, v] of Object.entries(rawAttrs)) {
    if (k === 'xmlns') local.set('', v);
    else if (k.startsWith('xmlns:')) {
      // Namespaces in XML 1.0 §3: a prefix can't be bound to the empty name.
      if (v === '') throw new XmlError(`prefix ${k.slice(6)} bound to an empty namespace`);
      local.set(k.slice(6), v);
    }
    else attrs[k] = v;
  }
  const colon = tag.indexOf(':');
  const prefix = colon >= 0 ? tag.slice(0, colon) : '';
  const name = colon >= 0 ? tag.slice(colon + 1) : tag;
  const ns = local.get(prefix);
  if (ns === undefined && prefix !== '') throw new XmlError(`undeclared namespace prefix ${prefix}`);
  const el: XmlElement = { ns: ns ?? '', name, attrs, children: [], text: '' };
  for (const child of (node[tag] as RawNode[]) ?? []) {
    if ('#text' in child) el.text += String(child['#text']);
    else {
      const c = convert(child, local);
      if (c) el.children.push(c);
    }
  }
  return el;
}

/** Parses a request body; undefined for an empty one. Document types (entity tricks) are refused. */
export function parseXml(body: string): XmlElement | undefined {
  if (body.trim() === '') return undefined;
  if (/<!DOCTYPE/i.test(body)) throw new XmlError('document type declarations are not accepted');
  const valid = loadFxp().XMLValidator.validate(body);
  if (valid !== true) throw new XmlError(`malformed XML: ${valid.err.msg}`);
  const nodes = (parser ??= newParser()).parse(body) as RawNode[];
  for (const n of nodes) {
    const el = convert(n, new Map([['xml', 'http://www.w3.org/XML/1998/namespace']]));
    if (el) return el;
  }
  throw new XmlError('no root element');
}

export const is = (el: XmlElement | undefined, ns: string, name: string): boolean => el !== undefined && el.ns === ns && el.name === name;
export const child = (el: XmlElement, ns: string, name: string): XmlElement | undefined => el.children.find((c) => is(c, ns, name));

export function escapeXml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);
}

/** A property's name as `{ns}name`, the key of dead properties and of requested ones. */
export const propKey = (ns: string, name: string) => `{${ns}}${name}`;

export function splitKey(key: string): { ns: string; name: string } {
  const end = key.indexOf('}');
  return { ns: key.slice(1, end), name: key.slice(end + 1) };
}

/** Writes an element back as XML, declaring its namespaces itself (used to store dead properties). */
export function serialize(el: XmlElement): string {
  const prefixes = new Map<string, string>();
  const open = (ns: string) => {
    if (ns === '') return { prefix: '', decl: '' };
    let p = prefixes.get(ns);
    let decl = '';
    if (!p) {
      p = `ns${prefixes.size}`;
      prefixes.set(ns, p);
      decl = ` xmlns:${p}="${escapeXml(ns)}"`;
    }
    return { prefix: `${p}:`, decl };
  };
  const write = (e: XmlElement): string => {
    const { prefix, decl } = open(e.ns);
    const attrs = Object.entries(e.attrs)
      .map(([k, v]) => ` ${k}="${escapeXml(v)}"`)
      .join('');
    const inner = escapeXml(e.text) + e.children.map(write).join('');
    return inner === '' ? `<${prefix}${e.name}${decl}${attrs}/>` : `<${prefix}${e.name}${decl}${attrs}>${inner}</${prefix}${e.name}>`;
  };
  return write(el);
}

/** An empty or valued property element for a response, with its namespace declared when not DAV:. */
export function propElement(ns: string, name: string, inner = ''): string {
  if (ns === DAV) return inner === '' ? `<D:${name}/>` : `<D:${name}>${inner}</D:${name}>`;
  if (ns === '') return inner === '' ? `<${name} xmlns=""/>` : `<${name} xmlns="">${inner}</${name}>`;
  const decl = ` xmlns:X="${escapeXml(ns)}"`;
  return inner === '' ? `<X:${name}${decl}/>` : `<X:${name}${decl}>${inner}</X:${name}>`;
}
