import type { IncomingHttpHeaders } from 'node:http';
import type { Core } from '../../core.js';
import type { User } from '../../db/users.js';
import { cleanPath } from '../../util/paths.js';
import { rootedAt, Tree } from '../../view/tree.js';
import type { View } from '../../view/view.js';
import { accessDenied, noSuchBucket, S3Error, signatureMismatch } from './errors.js';
import { checkTime, type ChunkSigning, parseSignature, type SignedRequest, verifySignature } from './sigv4.js';
import type { EventOrigin } from '../../audit/events.js';

export interface Bucket {
  name: string;
  /** The folder of the virtual tree the bucket shows. */
  path: string;
}

/** Who sent a request: the user whose rules apply, and the buckets they see. */
export interface Principal {
  user: User;
  anonymous: boolean;
  buckets: Bucket[];
  /** Set when the body is signed chunk by chunk (STREAMING-AWS4-HMAC-SHA256-PAYLOAD). */
  chunkSigning?: ChunkSigning;
  signature?: SignedRequest;
}

const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/**
 * The buckets of the `s3_buckets` setting (a JSON list of `{name, path}`), read on every request
 * so a change applies without a restart. Malformed entries are left out.
 */
export function configuredBuckets(core: Core): Bucket[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(core.settings.get('s3_buckets') || '[]');
  } catch {
    return [];
  }
  if (!Array.isArray(parsed)) return [];
  const out: Bucket[] = [];
  for (const b of parsed) {
    if (typeof b !== 'object' || b === null) continue;
    const { name, path: p } = b as Record<string, unknown>;
    if (typeof name !== 'string' || typeof p !== 'string' || !BUCKET_NAME.test(name)) continue;
    if (out.some((o) => o.name === name)) continue;
    out.push({ name, path: cleanPath(p) });
  }
  return out;
}

export interface RequestParts {
  method: string;
  rawPath: string;
  rawQuery: string;
  query: Map<string, string>;
  headers: IncomingHttpHeaders;
  ip: string;
}

/**
 * The buckets a user reaches: those of the setting whose folder is in the user's tree (their
 * base path or one of their named roots), then each named root whose name is a bucket name and
 * not taken by the setting, as a bucket of that name.
 */
function bucketsOf(user: User, all: Bucket[]): Bucket[] {
  const tree = new Tree(user);
  const configured = all.filter((b) => tree.contains(b.path));
  const ofRoots = tree.named.filter((r) => BUCKET_NAME.test(r.name) && !all.some((b) => b.name === r.name));
  return [...configured, ...ofRoots.map((r) => ({ name: r.name, path: r.path }))];
}

/** The user and secret of an access key: the settings' pair (the admin), or a user's own key. */
async function keyOwner(core: Core, accessKey: string): Promise<{ user: User; secret: string; keyId?: number } | undefined> {
  const keyId = core.settings.get('s3_access_key_id');
  const secret = core.settings.get('s3_secret_access_key');
  if (keyId !== '' && secret !== '' && accessKey === keyId) return { user: await core.accounts.admin(), secret };
  const own = await core.repos.s3Keys.byField('accessKey', accessKey);
  if (!own) return undefined;
  const user = await core.repos.users.byId(own.userId);
  if (!user || user.disabled) return undefined;
  return { user, secret: own.secret, keyId: own.id };
}

/**
 * Authenticates a request: a SigV4 signature (header or presigned query) by the key pair of the
 * `s3_access_key_id` / `s3_secret_access_key` settings stands for the admin, one of a user's own
 * keys for that user; no signature at all is the guest, for reads only. Bad signatures count
 * against the client's address as failed logins do, and a locked address is refused before any
 * signature is checked.
 */
export async function authenticate(core: Core, req: RequestParts): Promise<Principal> {
  const sig = parseSignature(req.headers, req.query);
  const all = configuredBuckets(core);
  if (!sig) {
    if (req.method !== 'GET' && req.method !== 'HEAD') throw accessDenied('Anonymous requests may only read.');
    const guest = await core.repos.users.byRole(1);
    if (!guest || guest.disabled) throw accessDenied();
    return { user: guest, anonymous: true, buckets: bucketsOf(guest, all) };
  }
  const origin = { front: 's3', ip: req.ip } as const;
  await core.limiter.check(req.ip);
  const owner = await keyOwner(core, sig.accessKey);
  if (!owner) {
    await core.limiter.fail(req.ip);
    core.accounts.recordSignIn(origin, '', sig.accessKey, 'Unauthorized');
    throw new S3Error(403, 'InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.');
  }
  let key: Buffer;
  try {
    checkTime(sig, req.query);
    key = verifySignature(sig, owner.secret, req.method, req.rawPath, req.rawQuery, req.headers);
  } catch (err) {
    if (err instanceof S3Error && err.code === 'SignatureDoesNotMatch') {
      await core.limiter.fail(req.ip);
      core.accounts.recordSignIn(origin, owner.user.username, sig.accessKey, 'Unauthorized');
    }
    throw err;
  }
  await core.limiter.succeed(req.ip);
  core.accounts.recordSignIn(origin, owner.user.username, sig.accessKey, 'ok');
  if (owner.keyId !== undefined) await core.repos.s3Keys.touch(owner.keyId, Date.now());
  const streaming = sig.payloadHash.startsWith('STREAMING-AWS4-HMAC-SHA256-PAYLOAD');
  return {
    user: owner.user,
    anonymous: false,
    buckets: bucketsOf(owner.user, all),
    signature: sig,
    chunkSigning: streaming ? { key, amzDate: sig.amzDate, scope: sig.scope, seedSignature: sig.signature } : undefined,
  };
}

export { signatureMismatch };

/** The bucket by name, as this principal sees it. */
export function bucketOf(p: Principal, name: string): Bucket {
  const b = p.buckets.find((x) => x.name === name);
  if (!b) throw noSuchBucket(name);
  return b;
}

/**
 * The principal's view rooted at the bucket's folder (inside the user's base path, see
 * bucketsOf): the user record with its base path moved to the bucket, so every key is cleaned
 * below it and the user's rules hold as on every front.
 */
export function bucketView(core: Core, p: Principal, bucket: Bucket, origin?: EventOrigin): View {
  return core.views.for(rootedAt(p.user, bucket.path), { front: 's3', origin });
}

/** The principal's view from its own base path (copies between buckets). */
export function principalView(core: Core, p: Principal, origin?: EventOrigin): View {
  return core.views.for(p.user, { front: 's3', origin });
}

/** The guest reads only where it holds the read bits a raw link needs; writes need a key. */
export function requireWriter(p: Principal): void {
  if (p.anonymous) throw accessDenied();
  if (p.user.disabled) throw accessDenied();
}
