import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Obj } from '../../drivers/types.js';
import type { View } from '../../view/view.js';
import { noSuchKey, S3Error } from './errors.js';
import type { Principal } from './principal.js';
import { parseXml } from './xml.js';

/** One S3 request: its principal, bucket and key (decoded, without the leading `/`). */
export interface S3Call {
  req: FastifyRequest;
  reply: FastifyReply;
  principal: Principal;
  bucket: string;
  key: string;
  query: Map<string, string>;
}

/** The largest XML body a request may send (DeleteObjects of 1 000 keys, tagging, ACLs…). */
export const MAX_XML_BODY = 2 * 1024 * 1024;

/** Marks the keys of folders an S3 client created (`a/b/`): stored as the folder itself. */
export const isFolderKey = (key: string) => key.endsWith('/');

export const iso = (d: Date) => (Number.isNaN(d.getTime()) ? new Date(0) : d).toISOString();

/** Sends a document as bytes (Node writes a large string to a socket far slower than its bytes). */
export function xml(c: S3Call, body: string | Buffer, status = 200) {
  return c.reply.code(status).type('application/xml').send(typeof body === 'string' ? Buffer.from(body) : body);
}

/** The object a key names: a file, or a folder for a key ending in `/`. */
export async function objectAt(view: View, key: string): Promise<{ p: string; obj: Obj }> {
  const p = view.virtual(key);
  const obj = await view.find(p);
  if (!obj || obj.isDir !== isFolderKey(key)) throw noSuchKey();
  return { p, obj };
}

/** The request body, whole (at most MAX_XML_BODY bytes). */
export async function readRaw(req: FastifyRequest): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req.raw) {
    size += (chunk as Buffer).length;
    if (size > MAX_XML_BODY) throw new S3Error(400, 'MaxMessageLengthExceeded', 'Your request was too big.');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** The request body as an XML document (MalformedXML when it is none, or declares a DOCTYPE). */
export async function readBody(req: FastifyRequest): Promise<Record<string, unknown>> {
  return parseXml(await readRaw(req));
}
