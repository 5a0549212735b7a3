import { XMLParser } from 'fast-xml-parser';
import { S3Error } from './errors.js';

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

const SPECIAL = /[&<>"']/;
export const escapeXml = (s: string): string => (SPECIAL.test(s) ? s.replace(/[&<>"']/g, (c) => ENTITIES[c]!) : s);

/** Markup already rendered and escaped, as UTF-8 bytes (the many entries of a listing). */
export class RawXml {
  constructor(readonly bytes: Buffer) {}
}

/** An XML node: a name with text, or children; undefined children are left out. */
export type XmlNode = [string, string | number | boolean | Array<XmlNode | undefined>];

function render(node: XmlNode): string {
  const [name, body] = node;
  if (!Array.isArray(body)) return `<${name}>${escapeXml(String(body))}</${name}>`;
  let out = `<${name}>`;
  for (const child of body) if (child !== undefined) out += render(child);
  return `${out}</${name}>`;
}

const NS = 'http://s3.amazonaws.com/doc/2006-03-01/';

/** A complete S3 answer document, its root element in the S3 namespace. */
export function document(root: string, children: Array<XmlNode | undefined>): string {
  const inner = render([root, children]).slice(root.length + 2);
  return `<?xml version="1.0" encoding="UTF-8"?>\n<${root} xmlns="${NS}">${inner}`;
}

/** `document` as bytes, with runs of pre-rendered markup among the root's children. */
export function documentBytes(root: string, children: Array<XmlNode | RawXml | undefined>): Buffer {
  const out: Buffer[] = [];
  let text = `<?xml version="1.0" encoding="UTF-8"?>\n<${root} xmlns="${NS}">`;
  for (const child of children) {
    if (child === undefined) continue;
    if (child instanceof RawXml) {
      out.push(Buffer.from(text), child.bytes);
      text = '';
    } else text += render(child);
  }
  out.push(Buffer.from(`${text}</${root}>`));
  return Buffer.concat(out);
}

export function errorDocument(code: string, message: string, resource: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n${render(['Error', [['Code', code], ['Message', message], ['Resource', resource]]])}`;
}

// Go's encoder writes the quotes of ETags as &#34;: numeric character references are decoded too.
const parser = new XMLParser({ ignoreAttributes: true, parseTagValue: false, htmlEntities: true, isArray: (name) => name === 'Object' || name === 'Part' || name === 'Tag' || name === 'Grant' });

const malformedXml = () => new S3Error(400, 'MalformedXML', 'The XML you provided was not well-formed or did not validate against our published schema.');

/**
 * A request's XML body as an object. A document type declaration is refused whatever it holds
 * (S3 bodies have none, and its entities would be expanded: billion laughs, a 2 MB body growing
 * to gigabytes), as is anything that does not parse.
 */
export function parseXml(body: Buffer): Record<string, unknown> {
  const text = body.toString('utf8');
  if (/<!DOCTYPE/i.test(text) || /<!ENTITY/i.test(text)) throw malformedXml();
  try {
    return parser.parse(text) as Record<string, unknown>;
  } catch {
    throw malformedXml();
  }
}
