const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

export const escapeXml = (s: string): string => s.replace(/[&<>"']/g, (c) => ENTITIES[c]!);

/** An XML node: a name with text, or children; undefined children are left out. */
export type XmlNode = [string, string | number | boolean | Array<XmlNode | undefined>];

function render(node: XmlNode): string {
  const [name, body] = node;
  if (!Array.isArray(body)) return `<${name}>${escapeXml(String(body))}</${name}>`;
  return `<${name}>${body.filter((n): n is XmlNode => n !== undefined).map(render).join('')}</${name}>`;
}

const NS = 'http://s3.amazonaws.com/doc/2006-03-01/';

/** A complete S3 answer document, its root element in the S3 namespace. */
export function document(root: string, children: Array<XmlNode | undefined>): string {
  const inner = render([root, children]).slice(root.length + 2);
  return `<?xml version="1.0" encoding="UTF-8"?>\n<${root} xmlns="${NS}">${inner}`;
}

export function errorDocument(code: string, message: string, resource: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n${render(['Error', [['Code', code], ['Message', message], ['Resource', resource]]])}`;
}
