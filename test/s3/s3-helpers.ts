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
  const signed = await signer.sign(
    { method, protocol: u.protocol, hostname: u.hostname, port: Number(u.port), path: signedPath, query: {}, headers: { host: opts.host ?? u.host, 'x-amz-content-sha256': payloadHash, ...opts.headers }, body },
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
