import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, statfs, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough, type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FastifyReply } from 'fastify';
import type { Core } from '../../core.js';
import { MSG_MOVED, requireSpace } from '../../uploads/decide.js';
import type { View } from '../../view/view.js';
import { accessDenied, S3Error } from './errors.js';
import { etagOf } from './etag.js';
import { compareKeys } from './listing.js';
import { type Principal, requireWriter } from './principal.js';
import { document, type XmlNode } from './xml.js';

/** Where multipart uploads are staged, below temp_dir. */
export const STAGING_FOLDER = 's3-multipart';
const MAX_PART = 10_000;
/** The most parts or uploads one list answer holds (S3's default and ceiling alike). */
const MAX_LIST = 1000;
/** An upload id: its start time in milliseconds (12 hex digits) then 20 random ones. */
const UPLOAD_ID = /^[0-9a-f]{32}$/;
/** Uploads neither completed nor aborted are dropped after this long (at start-up). */
export const UPLOAD_MAX_AGE_MS = 7 * 24 * 3600_000;
/** S3's smallest part but the last (5 MiB). */
const MIN_PART_SIZE = 5 * 1024 * 1024;
/** S3's largest part (5 GiB). */
const MAX_PART_SIZE = 5 * 1024 * 1024 * 1024;

interface UploadMeta {
  bucket: string;
  key: string;
  userId: number;
  initiated: string;
  contentType?: string;
  /** The bucket's folder when the upload began: a bucket moved since (s3_buckets) does not take its parts. */
  root?: string;
  /** The account's password stamp when the upload began: a password change since ends the upload, as it ends web sessions. */
  pwdTs?: number;
}

const noSuchUpload = () => new S3Error(404, 'NoSuchUpload', 'The specified multipart upload does not exist. The upload ID might be invalid, or the upload might have been aborted or completed.');
const partFile = (n: number) => `part-${String(n).padStart(5, '0')}`;

let lastIdTime = 0;

/**
 * Ids in initiation order (ListMultipartUploads orders a key's uploads by id, and its
 * upload-id-marker compares ids): the start time in milliseconds, one past the previous id's when
 * two start within the same millisecond, then random digits.
 */
function newUploadId(): string {
  lastIdTime = Math.max(Date.now(), lastIdTime + 1);
  return lastIdTime.toString(16).padStart(12, '0').slice(-12) + randomBytes(10).toString('hex');
}

/** A count from the query (max-parts, part-number-marker, max-uploads): absent is `fallback`; anything but digits is InvalidArgument. */
function countOf(q: Map<string, string>, name: string, fallback: number): number {
  const raw = q.get(name);
  if (raw === undefined) return fallback;
  if (!/^\d{1,10}$/.test(raw)) throw new S3Error(400, 'InvalidArgument', `${name} must be an integer from 0 to 2147483647, not ${JSON.stringify(raw.slice(0, 40))}.`);
  const n = Number(raw);
  if (n > 2_147_483_647) throw new S3Error(400, 'InvalidArgument', `${name} must be an integer from 0 to 2147483647, not ${raw}.`);
  return n;
}

/**
 * Multipart uploads staged as files under `temp_dir/s3-multipart/<upload id>/`: one file per part
 * (written to a temporary name, renamed when whole, its MD5 beside it), streamed into the tree
 * through the view on completion, so the object appears whole or not at all.
 */
export class Multipart {
  private readonly root: string;

  constructor(private readonly core: Core) {
    this.root = path.join(core.config.temp_dir, STAGING_FOLDER);
  }

  /** Drops staged uploads older than UPLOAD_MAX_AGE_MS (clients that died mid-upload); they survive a restart otherwise. */
  async dropStale(now = Date.now()): Promise<number> {
    let dropped = 0;
    for (const id of await readdir(this.root).catch(() => [] as string[])) {
      const dir = path.join(this.root, id);
      const st = await stat(path.join(dir, 'meta.json')).catch(() => stat(dir).catch(() => undefined));
      if (st && now - st.mtimeMs > UPLOAD_MAX_AGE_MS) {
        await rm(dir, { recursive: true, force: true });
        dropped++;
      }
    }
    return dropped;
  }

  private dir(id: string): string {
    if (!UPLOAD_ID.test(id)) throw noSuchUpload();
    return path.join(this.root, id);
  }

  /** The principal's upload `id`; with `object`, only when it is the upload of that bucket and key (as AWS: NoSuchUpload otherwise). */
  private async meta(p: Principal, id: string, object?: { bucket: string; key: string }): Promise<UploadMeta> {
    let meta: UploadMeta;
    try {
      meta = JSON.parse(await readFile(path.join(this.dir(id), 'meta.json'), 'utf8')) as UploadMeta;
    } catch {
      throw noSuchUpload();
    }
    if (meta.userId !== p.user.id) throw noSuchUpload();
    if (object && (meta.bucket !== object.bucket || meta.key !== object.key)) throw noSuchUpload();
    return meta;
  }

  /**
   * Decides a part or the completion on the account as it is now: the principal is the upload's
   * user still (enabled, the password unchanged since the upload began), the bucket still shows
   * the folder it showed then, and a put of the key is allowed now. Returns the virtual path.
   */
  private async decide(view: View, meta: UploadMeta): Promise<string> {
    await this.core.views.live({ id: meta.userId, pwdTs: meta.pwdTs ?? 0 }, { front: 's3' }, { pwdTs: meta.pwdTs !== undefined }).user();
    if (meta.root !== undefined && meta.root !== view.root) throw accessDenied(MSG_MOVED);
    const target = view.virtual(meta.key);
    view.checkPut(target);
    return target;
  }

  async create(reply: FastifyReply, p: Principal, view: View, bucket: string, key: string) {
    requireWriter(p);
    if (key.endsWith('/')) throw new S3Error(400, 'InvalidRequest', 'A key ending in "/" names a folder.');
    view.checkPut(view.virtual(key));
    const id = newUploadId();
    await mkdir(this.dir(id), { recursive: true });
    const meta: UploadMeta = { bucket, key, userId: p.user.id, initiated: new Date().toISOString(), root: view.root, pwdTs: p.user.pwdTs };
    await writeFile(path.join(this.dir(id), 'meta.json'), JSON.stringify(meta));
    return reply.type('application/xml').send(document('InitiateMultipartUploadResult', [['Bucket', bucket], ['Key', key], ['UploadId', id]]));
  }

  async uploadPart(
    reply: FastifyReply,
    p: Principal,
    view: View,
    object: { bucket: string; key: string },
    id: string,
    partNumber: string | undefined,
    body: { stream: Readable; size: number; failure: () => S3Error | undefined; checksum: () => { name: string; value: string } | undefined },
    contentMd5: string | undefined,
  ) {
    requireWriter(p);
    const meta = await this.meta(p, id, object);
    const n = Number(partNumber);
    if (!Number.isInteger(n) || n < 1 || n > MAX_PART) throw new S3Error(400, 'InvalidArgument', 'Part number must be an integer between 1 and 10000, inclusive.');
    const target = await this.decide(view, meta);
    if (body.size > MAX_PART_SIZE) throw new S3Error(400, 'EntityTooLarge', 'Your proposed upload exceeds the maximum allowed size.');
    if (body.size > 0) await this.requireRoom(id, n, body.size, target);
    const dir = this.dir(id);
    const tmp = path.join(dir, `${partFile(n)}.${randomBytes(4).toString('hex')}.tmp`);
    const md5 = createHash('md5');
    let written = 0;
    const hashing = new Transform({
      transform(chunk: Buffer, _e, done) {
        md5.update(chunk);
        written += chunk.length;
        done(null, chunk);
      },
    });
    try {
      await pipeline(body.stream, hashing, createWriteStream(tmp));
      if (body.size >= 0 && written !== body.size) throw new S3Error(400, 'IncompleteBody', 'The request body is shorter or longer than its declared length.');
      const etag = md5.digest('hex');
      if (contentMd5 !== undefined && contentMd5 !== etag) throw new S3Error(400, 'BadDigest', 'The Content-MD5 you specified did not match what we received.');
      await writeFile(path.join(dir, `${partFile(n)}.md5`), etag);
      await rename(tmp, path.join(dir, partFile(n)));
      const sum = body.checksum();
      if (sum) reply.header(sum.name, sum.value);
      return reply.code(200).header('ETag', `"${etag}"`).send();
    } catch (err) {
      await rm(tmp, { force: true });
      throw body.failure() ?? err;
    }
  }

  /** Refuses a part that would take the upload's parts past the free space of the staging area or of the target's storage. */
  private async requireRoom(id: string, n: number, size: number, target: string): Promise<void> {
    const others = (await this.parts(id)).reduce((sum, x) => (x.n === n ? sum : sum + x.size), 0);
    await mkdir(this.root, { recursive: true });
    const st = await statfs(this.root);
    requireSpace(others + size, { storage: await this.core.writer.freeSpace(target), staging: st.bavail * st.bsize });
  }

  /** The parts staged so far: number, size, MD5 and time. */
  private async parts(id: string): Promise<Array<{ n: number; size: number; etag: string; modified: Date }>> {
    const dir = this.dir(id);
    const out = [];
    for (const name of await readdir(dir)) {
      const m = /^part-(\d{5})$/.exec(name);
      if (!m) continue;
      const st = await stat(path.join(dir, name));
      const etag = await readFile(path.join(dir, `${name}.md5`), 'utf8').catch(() => '');
      out.push({ n: Number(m[1]), size: st.size, etag, modified: st.mtime });
    }
    return out.sort((a, b) => a.n - b.n);
  }

  async complete(reply: FastifyReply, p: Principal, view: View, id: string, bucket: string, key: string, body: Record<string, unknown>) {
    requireWriter(p);
    const meta = await this.meta(p, id, { bucket, key });
    const target = await this.decide(view, meta);
    const asked = ((body.CompleteMultipartUpload as { Part?: Array<{ PartNumber?: string; ETag?: string }> } | undefined)?.Part ?? []).map((x) => ({
      n: Number(x.PartNumber),
      etag: String(x.ETag ?? '').replace(/"/g, '').toLowerCase(),
    }));
    if (asked.length === 0) throw new S3Error(400, 'MalformedXML', 'The XML you provided was not well-formed.');
    const staged = new Map((await this.parts(id)).map((x) => [x.n, x]));
    let prev = 0;
    let total = 0;
    for (const [i, a] of asked.entries()) {
      if (!(a.n > prev)) throw new S3Error(400, 'InvalidPartOrder', 'The list of parts was not in ascending order.');
      prev = a.n;
      const have = staged.get(a.n);
      if (!have || (a.etag !== '' && a.etag !== have.etag)) throw new S3Error(400, 'InvalidPart', `Part ${a.n} was not uploaded or its ETag differs.`);
      if (i < asked.length - 1 && have.size < MIN_PART_SIZE) throw new S3Error(400, 'EntityTooSmall', 'Your proposed upload is smaller than the minimum allowed object size.');
      total += have.size;
    }
    const dir = this.dir(id);
    const joined = new PassThrough();
    void (async () => {
      for (const a of asked) await pipeline(createReadStream(path.join(dir, partFile(a.n))), joined, { end: false });
      joined.end();
    })().catch((err: unknown) => joined.destroy(err as Error));
    await view.put(target, { name: view.checkPut(target), size: total, stream: joined }, true);
    await rm(dir, { recursive: true, force: true });
    const obj = await view.stat(target);
    return reply.type('application/xml').send(document('CompleteMultipartUploadResult', [['Bucket', bucket], ['Key', key], ['ETag', etagOf(obj)]]));
  }

  async abort(reply: FastifyReply, p: Principal, id: string, object: { bucket: string; key: string }) {
    requireWriter(p);
    await this.meta(p, id, object);
    await rm(this.dir(id), { recursive: true, force: true });
    return reply.code(204).send();
  }

  async listParts(reply: FastifyReply, p: Principal, id: string, bucket: string, key: string, q: Map<string, string>) {
    await this.meta(p, id, { bucket, key });
    const marker = countOf(q, 'part-number-marker', 0);
    const max = Math.min(countOf(q, 'max-parts', MAX_LIST), MAX_LIST);
    const all = (await this.parts(id)).filter((x) => x.n > marker);
    const page = all.slice(0, max);
    const truncated = all.length > max;
    const parts: XmlNode[] = page.map((x) => ['Part', [['PartNumber', x.n], ['LastModified', x.modified.toISOString()], ['ETag', `"${x.etag}"`], ['Size', x.size]]]);
    return reply.type('application/xml').send(
      document('ListPartsResult', [
        ['Bucket', bucket],
        ['Key', key],
        ['UploadId', id],
        ['PartNumberMarker', marker],
        ['NextPartNumberMarker', page.length > 0 ? page[page.length - 1]!.n : marker],
        ['MaxParts', max],
        ['IsTruncated', truncated],
        ...parts,
      ]),
    );
  }

  /**
   * ListMultipartUploads: the principal's own uploads into the bucket, in key order and, for one
   * key, in upload id order (ids begin with their start time, so that is initiation order).
   * With a delimiter, keys sharing the part of the key up to it after the prefix are one common
   * prefix; keys and prefixes count alike against max-uploads. A page starts after key-marker:
   * with upload-id-marker, after that upload of the key-marker's key.
   */
  async listUploads(reply: FastifyReply, p: Principal, bucket: string, q: Map<string, string>) {
    const prefix = q.get('prefix') ?? '';
    const delimiter = q.get('delimiter') ?? '';
    const keyMarker = q.get('key-marker') ?? '';
    // Without key-marker, S3 ignores upload-id-marker.
    const idMarker = keyMarker === '' ? '' : (q.get('upload-id-marker') ?? '');
    const max = Math.min(countOf(q, 'max-uploads', MAX_LIST), MAX_LIST);
    const encode = q.get('encoding-type') === 'url';
    const enc = (s: string) => (encode ? encodeURIComponent(s).replace(/%2F/g, '/') : s);
    const found: Array<{ id: string; meta: UploadMeta }> = [];
    for (const id of await readdir(this.root).catch(() => [] as string[])) {
      if (!UPLOAD_ID.test(id)) continue;
      const meta = await this.meta(p, id).catch(() => undefined);
      if (meta && meta.bucket === bucket && meta.key.startsWith(prefix)) found.push({ id, meta });
    }
    found.sort((a, b) => compareKeys(a.meta.key, b.meta.key) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const uploads: XmlNode[] = [];
    const prefixes: XmlNode[] = [];
    let count = 0;
    let truncated = false;
    let next: { key: string; id: string } | undefined;
    let lastPrefix = '';
    for (const { id, meta } of found) {
      const at = delimiter ? meta.key.indexOf(delimiter, prefix.length) : -1;
      const common = at >= 0 ? meta.key.slice(0, at + delimiter.length) : undefined;
      if (common !== undefined) {
        // A prefix at or before the marker was listed already (or holds only keys before it).
        if (common === lastPrefix || (keyMarker && compareKeys(common, keyMarker) <= 0)) continue;
      } else if (keyMarker) {
        const c = compareKeys(meta.key, keyMarker);
        if (c < 0 || (c === 0 && (idMarker === '' || id <= idMarker))) continue;
      }
      if (count >= max) {
        truncated = true;
        break;
      }
      count++;
      if (common !== undefined) {
        prefixes.push(['CommonPrefixes', [['Prefix', enc(common)]]]);
        lastPrefix = common;
        next = { key: common, id: '' };
      } else {
        uploads.push(['Upload', [['Key', enc(meta.key)], ['UploadId', id], ['Initiated', meta.initiated], ['StorageClass', 'STANDARD']]]);
        next = { key: meta.key, id };
      }
    }
    return reply.type('application/xml').send(
      document('ListMultipartUploadsResult', [
        ['Bucket', bucket],
        ['KeyMarker', enc(keyMarker)],
        ['UploadIdMarker', idMarker],
        truncated && next ? ['NextKeyMarker', enc(next.key)] : undefined,
        truncated && next ? ['NextUploadIdMarker', next.id] : undefined,
        ['Prefix', enc(prefix)],
        delimiter ? ['Delimiter', enc(delimiter)] : undefined,
        ['MaxUploads', max],
        encode ? ['EncodingType', 'url'] : undefined,
        ['IsTruncated', truncated],
        ...uploads,
        ...prefixes,
      ]),
    );
  }
}
