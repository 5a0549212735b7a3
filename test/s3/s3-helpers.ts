import { createHash } from 'node:crypto';
import { S3Client } from '@aws-sdk/client-s3';
import { startS3Server } from '../../src/protocols/s3/server.js';
import type { ProtocolListener } from '../../src/protocols/listeners.js';
import type { TestServer } from '../helpers/server.js';

export const KEY_ID = 'AKIATESTKEY0000001';
export const SECRET = 'secret/with+chars=0123456789abcdefghij';

/** Sets the key pair and buckets (as the admin would in the settings page) and starts the S3 listener on a loopback port. */
export async function startS3(s: TestServer, buckets: Array<{ name: string; path: string }>): Promise<{ listener: ProtocolListener; endpoint: string; admin: string }> {
  const admin = await s.login();
  await saveSettings(s, admin, { s3_access_key_id: KEY_ID, s3_secret_access_key: SECRET, s3_buckets: JSON.stringify(buckets) });
  const listener = await startS3Server(s.core, 0, '127.0.0.1');
  return { listener, endpoint: `http://127.0.0.1:${listener.port}`, admin };
}

export async function saveSettings(s: TestServer, token: string, values: Record<string, string>): Promise<void> {
  const r = await s.api('POST', '/api/admin/setting/save', { token, body: Object.entries(values).map(([key, value]) => ({ key, value })) });
  if (r.code !== 200) throw new Error(`setting save failed: ${r.message}`);
}

export function client(endpoint: string, opts: { keyId?: string; secret?: string; region?: string; virtualHost?: boolean } = {}): S3Client {
  return new S3Client({
    endpoint,
    region: opts.region ?? 'us-east-1',
    forcePathStyle: !opts.virtualHost,
    credentials: { accessKeyId: opts.keyId ?? KEY_ID, secretAccessKey: opts.secret ?? SECRET },
    maxAttempts: 1,
  });
}

/** A presigned URL made by the SDK's own SigV4 signer (the s3-request-presigner package is its wrapper). */
export async function presign(endpoint: string, method: string, key: string, opts: { expiresIn: number; signingDate?: Date; secret?: string; region?: string }): Promise<string> {
  const { SignatureV4 } = await import('@smithy/signature-v4');
  const { Sha256 } = await sha256Ctor();
  const u = new URL(endpoint);
  const signer = new SignatureV4({ service: 's3', region: opts.region ?? 'us-east-1', credentials: { accessKeyId: KEY_ID, secretAccessKey: opts.secret ?? SECRET }, sha256: Sha256, uriEscapePath: false });
  const encodedPath = key.split('/').map(encodeURIComponent).join('/');
  const signed = await signer.presign(
    { method, protocol: u.protocol, hostname: u.hostname, port: Number(u.port), path: `/${encodedPath}`, query: {}, headers: { host: u.host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' } },
    { expiresIn: opts.expiresIn, signingDate: opts.signingDate, unsignableHeaders: new Set(['x-amz-content-sha256']) },
  );
  const q = new URLSearchParams(signed.query as Record<string, string>).toString();
  return `${endpoint}/${encodedPath}?${q}`;
}

const toBytes = (d: Uint8Array | ArrayBuffer | ArrayBufferView | string): Buffer | string =>
  typeof d === 'string' ? d : d instanceof ArrayBuffer ? Buffer.from(d) : Buffer.from(d.buffer, d.byteOffset, d.byteLength);

async function sha256Ctor() {
  const { createHash, createHmac } = await import('node:crypto');
  class Sha256 {
    private h;
    constructor(secret?: Uint8Array | ArrayBuffer | ArrayBufferView | string) {
      this.h = secret ? createHmac('sha256', toBytes(secret)) : createHash('sha256');
    }
    update(data: Uint8Array | ArrayBuffer | ArrayBufferView | string) {
      this.h.update(toBytes(data));
    }
    async digest() {
      return new Uint8Array(this.h.digest());
    }
  }
  return { Sha256 };
}

export interface RawAnswer {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

/**
 * Sends one request signed by the SDK's SigV4 signer over `signedPath` (already URI-encoded),
 * with the path on the wire exactly as `wirePath` (no URL normalisation), `tamper` applied to the
 * headers after signing, and `sendBody` sent instead of the signed body.
 */
export async function signedRequest(
  endpoint: string,
  method: string,
  signedPath: string,
  opts: { wirePath?: string; host?: string; headers?: Record<string, string>; body?: string; sendBody?: string; region?: string; signingDate?: Date; tamper?: (h: Record<string, string>) => void; secret?: string } = {},
): Promise<RawAnswer> {
  const { SignatureV4 } = await import('@smithy/signature-v4');
  const { Sha256 } = await sha256Ctor();
  const u = new URL(endpoint);
  const body = opts.body ?? '';
  const payloadHash = createHashHex(body);
  const signer = new SignatureV4({ service: 's3', region: opts.region ?? 'us-east-1', credentials: { accessKeyId: KEY_ID, secretAccessKey: opts.secret ?? SECRET }, sha256: Sha256, uriEscapePath: false });
  // A query in the signed path is signed as the query (UploadPart's partNumber and uploadId).
  const q = signedPath.indexOf('?');
  const query = q < 0 ? {} : Object.fromEntries(new URLSearchParams(signedPath.slice(q + 1)));
  const signed = await signer.sign(
    { method, protocol: u.protocol, hostname: u.hostname, port: Number(u.port), path: q < 0 ? signedPath : signedPath.slice(0, q), query, headers: { host: opts.host ?? u.host, 'x-amz-content-sha256': payloadHash, ...opts.headers }, body },
    { signingDate: opts.signingDate },
  );
  const headers = { ...(signed.headers as Record<string, string>) };
  opts.tamper?.(headers);
  const http = await import('node:http');
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: Number(u.port), method, path: opts.wirePath ?? signedPath, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(opts.sendBody ?? body);
  });
}

const createHashHex = (body: string): string => createHash('sha256').update(body).digest('hex');

export interface ChunkedPutOptions {
  /** Sign the chunks and the trailer (STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER); else STREAMING-UNSIGNED-PAYLOAD-TRAILER. */
  signed: boolean;
  /** The trailer as sent: `name:value` lines (the declared x-amz-trailer is `declare`, default their names). */
  trailer: string[];
  declare?: string;
  chunkSize?: number;
  /** Changes the trailer signature after it was made. */
  tamperTrailerSignature?: (sig: string) => string;
  /** Extra query (UploadPart's partNumber and uploadId). */
  query?: Record<string, string>;
}

/**
 * A PUT with an aws-chunked body and a trailer, made by hand as the SigV4 streaming spec lays
 * it out (what the SDKs and AWS's worked example send): the request signed by the SDK's signer
 * over the streaming payload kind, then each chunk signed in turn from that seed, then the
 * trailer signed over its canonical form (`name:value\n` lines) chained to the last chunk.
 */
export async function chunkedPut(endpoint: string, path: string, data: Buffer, opts: ChunkedPutOptions): Promise<RawAnswer> {
  const { createHmac } = await import('node:crypto');
  const { SignatureV4 } = await import('@smithy/signature-v4');
  const { Sha256 } = await sha256Ctor();
  const u = new URL(endpoint);
  const kind = opts.signed ? 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER' : 'STREAMING-UNSIGNED-PAYLOAD-TRAILER';
  const declare = opts.declare ?? opts.trailer.map((l) => l.slice(0, l.indexOf(':'))).join(',');
  const signer = new SignatureV4({ service: 's3', region: 'us-east-1', credentials: { accessKeyId: KEY_ID, secretAccessKey: SECRET }, sha256: Sha256, uriEscapePath: false });
  const signingDate = new Date();
  const signed = await signer.sign(
    {
      method: 'PUT',
      protocol: u.protocol,
      hostname: u.hostname,
      port: Number(u.port),
      path,
      query: opts.query ?? {},
      headers: { host: u.host, 'x-amz-content-sha256': kind, 'content-encoding': 'aws-chunked', 'x-amz-decoded-content-length': String(data.length), ...(declare ? { 'x-amz-trailer': declare } : {}) },
    },
    { signingDate },
  );
  const headers = { ...(signed.headers as Record<string, string>) };
  const auth = headers.authorization ?? headers.Authorization ?? '';
  const seed = /Signature=([0-9a-f]{64})/.exec(auth)![1]!;
  const amzDate = headers['x-amz-date']!;
  const scope = `${amzDate.slice(0, 8)}/us-east-1/s3/aws4_request`;
  const hmac = (key: Buffer | string, s: string) => createHmac('sha256', key).update(s).digest();
  const key = hmac(hmac(hmac(hmac(`AWS4${SECRET}`, amzDate.slice(0, 8)), 'us-east-1'), 's3'), 'aws4_request');
  const hex = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
  const size = opts.chunkSize ?? 64 * 1024;
  const parts: Buffer[] = [];
  let prev = seed;
  for (let at = 0; ; at += size) {
    const chunk = data.subarray(at, Math.min(at + size, data.length));
    if (opts.signed) {
      prev = hmac(key, ['AWS4-HMAC-SHA256-PAYLOAD', amzDate, scope, prev, hex(''), hex(chunk)].join('\n')).toString('hex');
      parts.push(Buffer.from(`${chunk.length.toString(16)};chunk-signature=${prev}\r\n`));
    } else parts.push(Buffer.from(`${chunk.length.toString(16)}\r\n`));
    if (chunk.length === 0) break;
    parts.push(chunk, Buffer.from('\r\n'));
  }
  let trailer = opts.trailer.map((l) => `${l}\r\n`).join('');
  if (opts.signed) {
    const canonical = opts.trailer.map((l) => `${l}\n`).join('');
    const sig = hmac(key, ['AWS4-HMAC-SHA256-TRAILER', amzDate, scope, prev, hex(canonical)].join('\n')).toString('hex');
    trailer += `x-amz-trailer-signature:${opts.tamperTrailerSignature ? opts.tamperTrailerSignature(sig) : sig}\r\n`;
  }
  parts.push(Buffer.from(`${trailer}\r\n`));
  const body = Buffer.concat(parts);
  headers['content-length'] = String(body.length);
  const search = new URLSearchParams(opts.query ?? {}).toString();
  const http = await import('node:http');
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: Number(u.port), method: 'PUT', path: search ? `${path}?${search}` : path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}
