import dns from 'node:dns';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { DeleteObjectsCommand, GetObjectCommand, ListObjectsCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { freePort } from '../helpers/process.js';

const require = createRequire(import.meta.url);
// s3rver ships no types: the little used here.
interface S3rverKoa {
  run(): Promise<{ port: number }>;
  close(): Promise<void>;
  middleware: Array<(ctx: any, next: () => Promise<void>) => unknown>;
  store: { getResourcePath(bucket: string, key: string | undefined, resource: string): string };
}
const S3rver = require('s3rver') as new (opts: Record<string, unknown>) => S3rverKoa;

export const S3_KEY = 'S3RVER';
export const BUCKET = 'atrium-bucket';

/**
 * Names under `*.s3.localhost` resolve to loopback in this process, so that virtual-host style
 * requests (`<bucket>.s3.localhost`) reach s3rver, whose service endpoint is `localhost`.
 */
export function resolveS3Localhost(): void {
  const lookup = dns.lookup as unknown as { atriumPatched?: boolean } & typeof dns.lookup;
  if (lookup.atriumPatched) return;
  const patched = ((host: string, ...rest: unknown[]) =>
    (lookup as unknown as (...a: unknown[]) => void)(/(^|\.)s3\.localhost$/.test(host) ? '127.0.0.1' : host, ...rest)) as unknown as typeof dns.lookup;
  (patched as unknown as { atriumPatched: boolean }).atriumPatched = true;
  dns.lookup = patched;
}

export interface S3Peer {
  port: number;
  /** The SDK pointed at the peer, path-style, to seed and inspect behind Atrium's back. */
  sdk: S3Client;
  put(key: string, body: string | Buffer): Promise<void>;
  read(key: string): Promise<Buffer | undefined>;
  keys(prefix: string): Promise<string[]>;
  clear(): Promise<void>;
  /** Ids of the multipart uploads begun and neither completed nor aborted. */
  pendingUploads(): string[];
  /** Part numbers held by a pending multipart upload. */
  pendingParts(uploadId: string): number[];
  start(): Promise<void>;
  stop(): Promise<void>;
  destroy(): Promise<void>;
}

/** s3rver (in this process) on a loopback port, with one bucket, restartable on the same port. */
export async function startS3rver(): Promise<S3Peer> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'atrium-s3rver-'));
  const port = await freePort();
  let server: InstanceType<typeof S3rver> | undefined;
  const uploadsDir = () => server!.store.getResourcePath(BUCKET, undefined, 'uploads');
  const start = async () => {
    server = new S3rver({ port, address: '127.0.0.1', silent: !process.env.S3RVER_LOG, directory: dir, serviceEndpoint: 'localhost', configureBuckets: [{ name: BUCKET }] });
    // s3rver 3.7 has no AbortMultipartUpload (DELETE ?uploadId answers 405): added here as S3
    // answers it, dropping the upload's parts (204), NoSuchUpload (404) for an unknown id.
    server.middleware.splice(server.middleware.length - 1, 0, async (ctx, next) => {
      if (ctx.method !== 'DELETE' || typeof ctx.query.uploadId !== 'string') return next();
      const upload = path.join(uploadsDir(), path.basename(ctx.query.uploadId));
      if (!existsSync(upload)) {
        ctx.status = 404;
        ctx.type = 'application/xml';
        ctx.body = '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchUpload</Code><Message>The specified upload does not exist.</Message></Error>';
        return;
      }
      rmSync(upload, { recursive: true, force: true });
      ctx.status = 204;
    });
    await server.run();
  };
  const stop = async () => {
    await server?.close();
    server = undefined;
  };
  await start();
  const sdk = new S3Client({
    endpoint: `http://127.0.0.1:${port}`,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: S3_KEY, secretAccessKey: S3_KEY },
  });
  const keys = async (prefix: string) => {
    const out: string[] = [];
    let token: string | undefined;
    do {
      // v1: s3rver's v2 continuation tokens use DES, which Node 20's OpenSSL 3 refuses.
      const page = await sdk.send(new ListObjectsCommand({ Bucket: BUCKET, Prefix: prefix, Marker: token }));
      for (const c of page.Contents ?? []) out.push(c.Key!);
      token = page.IsTruncated ? page.Contents?.at(-1)?.Key : undefined;
    } while (token);
    return out;
  };
  return {
    port,
    sdk,
    put: async (key, body) => void (await sdk.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }))),
    read: async (key) => {
      try {
        const r = await sdk.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
        return Buffer.from(await r.Body!.transformToByteArray());
      } catch {
        return undefined;
      }
    },
    keys,
    clear: async () => {
      const all = await keys('');
      for (let i = 0; i < all.length; i += 1000) {
        await sdk.send(new DeleteObjectsCommand({ Bucket: BUCKET, Delete: { Objects: all.slice(i, i + 1000).map((Key) => ({ Key })) } }));
      }
    },
    pendingUploads: () => (existsSync(uploadsDir()) ? readdirSync(uploadsDir()) : []),
    pendingParts: (uploadId) =>
      readdirSync(path.join(uploadsDir(), uploadId))
        .filter((f) => /^\d+$/.test(f))
        .map(Number)
        .sort((a, b) => a - b),
    start,
    stop,
    destroy: async () => {
      await stop();
      sdk.destroy();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
