import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { Transform, type TransformCallback } from 'node:stream';
import { S3Error, signatureMismatch } from './errors.js';

export const ALGORITHM = 'AWS4-HMAC-SHA256';
export const EMPTY_SHA256 = createHash('sha256').update('').digest('hex');
/** How far a signed request's date may be from the server's clock (AWS allows 15 minutes). */
export const MAX_SKEW_MS = 15 * 60_000;
/** The longest validity a presigned URL may ask for (7 days, as AWS). */
const MAX_EXPIRES_S = 7 * 24 * 3600;

/** What a request's signature claims, before the secret of its key is looked up. */
export interface SignedRequest {
  accessKey: string;
  /** `date/region/service/aws4_request`. */
  scope: string;
  date: string;
  region: string;
  amzDate: string;
  signedHeaders: string[];
  signature: string;
  /** The `x-amz-content-sha256` value (presigned: UNSIGNED-PAYLOAD). */
  payloadHash: string;
  presigned: boolean;
}

const malformed = (message: string) => new S3Error(400, 'AuthorizationHeaderMalformed', message);

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();

/** AWS's URI encoding: every byte but the unreserved characters, `/` kept in paths. */
export function awsEncode(s: string, keepSlash: boolean): string {
  const encoded = encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return keepSlash ? encoded.replace(/%2F/g, '/') : encoded;
}

const decode = (s: string) => {
  try {
    return decodeURIComponent(s.replace(/\+/g, '%20'));
  } catch {
    throw new S3Error(400, 'InvalidURI', 'Could not parse the specified URI.');
  }
};

/** The query's pairs, decoded, in the order given. */
export function queryPairs(rawQuery: string): Array<[string, string]> {
  if (rawQuery === '') return [];
  return rawQuery.split('&').filter(Boolean).map((part) => {
    const eq = part.indexOf('=');
    return eq < 0 ? [decode(part), ''] : [decode(part.slice(0, eq)), decode(part.slice(eq + 1))];
  });
}

/** Parses `Authorization` or the presigned query; undefined for an anonymous request. */
export function parseSignature(headers: IncomingHttpHeaders, query: Map<string, string>): SignedRequest | undefined {
  const auth = headers.authorization;
  if (auth !== undefined) {
    if (!auth.startsWith(`${ALGORITHM} `)) {
      if (auth.startsWith('AWS ')) throw new S3Error(400, 'InvalidRequest', 'Signature Version 2 is not supported; use AWS4-HMAC-SHA256.');
      throw malformed('The authorization header is malformed.');
    }
    const fields = new Map<string, string>();
    for (const part of auth.slice(ALGORITHM.length + 1).split(',')) {
      const eq = part.indexOf('=');
      if (eq > 0) fields.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
    }
    const amzDate = header(headers, 'x-amz-date') ?? '';
    const payloadHash = header(headers, 'x-amz-content-sha256');
    if (!payloadHash) throw new S3Error(400, 'InvalidRequest', 'Missing required header for this request: x-amz-content-sha256');
    return build(fields.get('Credential'), fields.get('SignedHeaders'), fields.get('Signature'), amzDate, payloadHash, false);
  }
  if (query.has('X-Amz-Algorithm')) {
    if (query.get('X-Amz-Algorithm') !== ALGORITHM) throw new S3Error(400, 'InvalidRequest', 'Only AWS4-HMAC-SHA256 is supported.');
    return build(
      query.get('X-Amz-Credential'),
      query.get('X-Amz-SignedHeaders'),
      query.get('X-Amz-Signature'),
      query.get('X-Amz-Date') ?? '',
      query.get('X-Amz-Content-Sha256') ?? 'UNSIGNED-PAYLOAD',
      true,
    );
  }
  return undefined;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v.join(',') : v;
}

/** The `x-amz-content-sha256` values a request may carry besides a SHA-256 in hex. */
const PAYLOAD_KINDS = new Set(['UNSIGNED-PAYLOAD', 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD', 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER', 'STREAMING-UNSIGNED-PAYLOAD-TRAILER']);

function build(credential: string | undefined, signed: string | undefined, signature: string | undefined, amzDate: string, payloadHash: string, presigned: boolean): SignedRequest {
  if (!credential || !signed || !signature) throw malformed('The authorization header is malformed; Credential, SignedHeaders and Signature are required.');
  if (!PAYLOAD_KINDS.has(payloadHash) && !/^[0-9a-fA-F]{64}$/.test(payloadHash)) {
    throw new S3Error(400, 'InvalidArgument', `x-amz-content-sha256 must be UNSIGNED-PAYLOAD, a streaming kind or a SHA-256 in hex, not ${payloadHash.slice(0, 80)}`);
  }
  const parts = credential.split('/');
  if (parts.length !== 5 || parts[3] !== 's3' || parts[4] !== 'aws4_request') throw malformed(`The credential is malformed: ${credential}`);
  if (!/^\d{8}T\d{6}Z$/.test(amzDate)) throw new S3Error(403, 'AccessDenied', 'AWS authentication requires a valid Date or X-Amz-Date header');
  if (amzDate.slice(0, 8) !== parts[1]) throw malformed('The credential date does not match the request date.');
  return {
    accessKey: parts[0]!,
    scope: parts.slice(1).join('/'),
    date: parts[1]!,
    region: parts[2]!,
    amzDate,
    signedHeaders: signed.split(';'),
    signature,
    payloadHash,
    presigned,
  };
}

const dateOf = (amzDate: string) =>
  Date.UTC(+amzDate.slice(0, 4), +amzDate.slice(4, 6) - 1, +amzDate.slice(6, 8), +amzDate.slice(9, 11), +amzDate.slice(11, 13), +amzDate.slice(13, 15));

/** Refuses a request signed too far from now, or a presigned URL past its expiry. */
export function checkTime(sig: SignedRequest, query: Map<string, string>, now = Date.now()): void {
  const at = dateOf(sig.amzDate);
  if (sig.presigned) {
    const expires = Number(query.get('X-Amz-Expires'));
    if (!Number.isInteger(expires) || expires < 1 || expires > MAX_EXPIRES_S) throw new S3Error(400, 'AuthorizationQueryParametersError', 'X-Amz-Expires must be between 1 and 604800 seconds');
    if (at - now > MAX_SKEW_MS) throw new S3Error(403, 'RequestTimeTooSkewed', 'The difference between the request time and the current time is too large.');
    if (now > at + expires * 1000) throw new S3Error(403, 'AccessDenied', 'Request has expired');
    return;
  }
  if (Math.abs(now - at) > MAX_SKEW_MS) throw new S3Error(403, 'RequestTimeTooSkewed', 'The difference between the request time and the current time is too large.');
}

/**
 * Derived signing keys by scope and secret: a key serves every request of its day and region
 * (four HMACs saved per request). Bounded; a changed secret is another entry, never a stale hit.
 */
const signingKeys = new Map<string, Buffer>();
const MAX_SIGNING_KEYS = 256;

export function signingKey(secret: string, sig: SignedRequest): Buffer {
  const id = `${sig.scope}\n${secret}`;
  const hit = signingKeys.get(id);
  if (hit) return hit;
  const [date, region, service] = sig.scope.split('/') as [string, string, string];
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, date), region), service), 'aws4_request');
  if (signingKeys.size >= MAX_SIGNING_KEYS) signingKeys.delete(signingKeys.keys().next().value!);
  signingKeys.set(id, key);
  return key;
}

/**
 * Checks the signature of a request against `secret`: the canonical request of AWS SigV4 from
 * the method, the path, the query (without X-Amz-Signature), the signed headers and the payload hash.
 */
export function verifySignature(sig: SignedRequest, secret: string, method: string, rawPath: string, rawQuery: string, headers: IncomingHttpHeaders): Buffer {
  const path = awsEncode(decode(rawPath.replace(/\+/g, '%2B')), true);
  const pairs = queryPairs(rawQuery)
    .filter(([k]) => !(sig.presigned && k === 'X-Amz-Signature'))
    .map(([k, v]) => [awsEncode(k, false), awsEncode(v, false)] as const)
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  const canonicalQuery = pairs.map(([k, v]) => `${k}=${v}`).join('&');
  if (!sig.signedHeaders.includes('host')) throw signatureMismatch('The host header must be signed.');
  requireSignedAmzHeaders(sig, headers);
  const canonicalHeaders = sig.signedHeaders
    .map((name) => {
      const value = header(headers, name);
      if (value === undefined) throw signatureMismatch(`The signed header ${name} is missing.`);
      return `${name}:${value.trim().replace(/\s+/g, ' ')}\n`;
    })
    .join('');
  const canonical = [method, path, canonicalQuery, canonicalHeaders, sig.signedHeaders.join(';'), sig.payloadHash].join('\n');
  const toSign = [ALGORITHM, sig.amzDate, sig.scope, sha256(canonical)].join('\n');
  const key = signingKey(secret, sig);
  const expected = hmac(key, toSign).toString('hex');
  if (!safeHexEqual(expected, sig.signature)) throw signatureMismatch();
  return key;
}

/**
 * Every `x-amz-*` header a request carries must be among its signed headers, in the
 * Authorization header and in a presigned URL alike (as AWS requires): an unsigned one could be
 * added by anyone holding the URL (a presigned PUT turned into a copy by `x-amz-copy-source`).
 * A presigned URL's own `X-Amz-*` parameters are in its query, which the signature covers.
 */
function requireSignedAmzHeaders(sig: SignedRequest, headers: IncomingHttpHeaders): void {
  const unsigned = Object.keys(headers).filter((name) => name.startsWith('x-amz-') && !sig.signedHeaders.includes(name));
  if (unsigned.length > 0) throw new S3Error(403, 'AccessDenied', `There were headers present in the request which were not signed: ${unsigned.sort().join(', ')}`);
}

function safeHexEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Checks a body against its declared SHA-256 as it streams; fails at its end on a mismatch. */
export class Sha256Check extends Transform {
  private readonly hash = createHash('sha256');
  constructor(private readonly expected: string) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.hash.update(chunk);
    done(null, chunk);
  }
  override _flush(done: TransformCallback): void {
    if (this.hash.digest('hex') !== this.expected.toLowerCase()) {
      done(new S3Error(400, 'XAmzContentSHA256Mismatch', 'The provided x-amz-content-sha256 header does not match what was computed.'));
      return;
    }
    done();
  }
}

/** What the chunk decoder needs to check chunk signatures (STREAMING-AWS4-HMAC-SHA256-PAYLOAD[-TRAILER]). */
export interface ChunkSigning {
  key: Buffer;
  amzDate: string;
  scope: string;
  seedSignature: string;
}

export interface ChunkedOptions {
  /** Trailer names the request declared in `x-amz-trailer` (lower case): each must come, no other. */
  trailers?: ReadonlySet<string>;
  /** The trailer is signed (STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER): `x-amz-trailer-signature` must match. */
  signedTrailer?: boolean;
  /** `x-amz-decoded-content-length`: the decoded body must have exactly this many bytes. */
  decodedLength?: number;
}

const MAX_CHUNK_HEADER = 4096;
const MAX_TRAILERS = 16;
const TRAILER_SIGNATURE = 'x-amz-trailer-signature';

export const malformedTrailer = (message: string) => new S3Error(400, 'MalformedTrailerError', message);

/**
 * Decodes an `aws-chunked` body (`<hex size>[;chunk-signature=<sig>]\r\n<data>\r\n` … a zero chunk,
 * then the trailer: `name:value` lines, with `x-amz-trailer-signature` last when it is signed, and
 * an empty line), checking each chunk's signature when `signing` is given and the trailer's
 * signature when it is signed. Bytes flow on as they arrive; only a chunk's hash is held. The
 * trailer is checked before the decoded stream ends, so a bad one fails the body, never a stored
 * object; its values are then in `trailers` for the checksum check downstream.
 */
export class AwsChunkedDecoder extends Transform {
  private pending: Buffer = Buffer.alloc(0);
  private remaining = 0;
  private state: 'header' | 'data' | 'crlf' | 'trailer' | 'done' = 'header';
  private chunkSig = '';
  private prevSig: string;
  private chunkHash = createHash('sha256');
  decodedBytes = 0;
  /** The trailer's headers (lower-case names), the signature left out. */
  readonly trailers = new Map<string, string>();
  private trailerSignature: string | undefined;
  private blankLines = 0;

  constructor(
    private readonly signing?: ChunkSigning,
    private readonly opts: ChunkedOptions = {},
  ) {
    super();
    this.prevSig = signing?.seedSignature ?? '';
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    try {
      this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
      this.consume();
      done();
    } catch (err) {
      done(err as Error);
    }
  }

  override _flush(done: TransformCallback): void {
    try {
      // A trailer may end with the body instead of an empty line.
      if (this.state === 'trailer' && this.pending.length === 0) this.endTrailer();
      if (this.state !== 'done') throw new S3Error(400, 'IncompleteBody', 'The request body ended before its last chunk.');
      done();
    } catch (err) {
      done(err as Error);
    }
  }

  private consume(): void {
    for (;;) {
      if (this.state === 'data') {
        if (this.pending.length === 0) return;
        const take = Math.min(this.remaining, this.pending.length);
        const part = this.pending.subarray(0, take);
        this.pending = this.pending.subarray(take);
        this.remaining -= take;
        this.decodedBytes += take;
        if (this.opts.decodedLength !== undefined && this.decodedBytes > this.opts.decodedLength) {
          throw new S3Error(400, 'IncompleteBody', 'The body is longer than its x-amz-decoded-content-length.');
        }
        if (this.signing) this.chunkHash.update(part);
        this.push(part);
        if (this.remaining === 0) {
          this.checkChunk();
          this.state = 'crlf';
        }
        continue;
      }
      if (this.state === 'crlf') {
        if (this.pending.length < 2) return;
        if (this.pending[0] !== 13 || this.pending[1] !== 10) throw new S3Error(400, 'IncompleteBody', 'A chunk is not followed by CRLF.');
        this.pending = this.pending.subarray(2);
        this.state = 'header';
        continue;
      }
      if (this.state === 'done') {
        if (this.pending.length > 0) throw new S3Error(400, 'IncompleteBody', 'Bytes follow the end of the chunked body.');
        return;
      }
      const eol = this.pending.indexOf(10);
      if (eol < 0) {
        if (this.pending.length > MAX_CHUNK_HEADER) throw new S3Error(400, 'IncompleteBody', 'A chunk header is too long.');
        return;
      }
      if (eol > MAX_CHUNK_HEADER) throw new S3Error(400, 'IncompleteBody', 'A chunk header is too long.');
      // Lines end with CRLF; a bare LF is taken too in the trailer.
      const line = this.pending.subarray(0, eol > 0 && this.pending[eol - 1] === 13 ? eol - 1 : eol).toString('latin1');
      if (this.state === 'header' && this.pending[eol - 1] !== 13) throw new S3Error(400, 'IncompleteBody', 'A chunk header does not end with CRLF.');
      this.pending = this.pending.subarray(eol + 1);
      if (this.state === 'trailer') {
        if (line !== '') this.trailerLine(line);
        else if (this.trailerComplete()) this.endTrailer();
        // Clients differ in the blank lines around the trailer: one before the part still expected is skipped.
        else if (++this.blankLines > MAX_TRAILERS) throw malformedTrailer('The trailer is malformed.');
        continue;
      }
      const [sizeHex, ...ext] = line.split(';');
      if (!/^[0-9a-fA-F]{1,16}$/.test(sizeHex!.trim())) throw new S3Error(400, 'IncompleteBody', 'A chunk size is malformed.');
      this.remaining = parseInt(sizeHex!.trim(), 16);
      if (!Number.isSafeInteger(this.remaining)) throw new S3Error(400, 'IncompleteBody', 'A chunk size is malformed.');
      const sigExt = ext.find((e) => e.startsWith('chunk-signature='));
      this.chunkSig = sigExt ? sigExt.slice('chunk-signature='.length) : '';
      if (this.signing && !this.chunkSig) throw signatureMismatch('A chunk has no signature.');
      this.chunkHash = createHash('sha256');
      if (this.remaining === 0) {
        this.checkChunk();
        this.state = 'trailer';
        continue;
      }
      this.state = 'data';
    }
  }

  private trailerLine(line: string): void {
    const colon = line.indexOf(':');
    if (colon <= 0) throw malformedTrailer('A trailer line is not "name:value".');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (this.trailerSignature !== undefined) throw malformedTrailer('The trailer signature must come last.');
    if (name === TRAILER_SIGNATURE) {
      this.trailerSignature = value;
      return;
    }
    if (this.trailers.has(name) || this.trailers.size >= MAX_TRAILERS) throw malformedTrailer(`The trailer ${name} is repeated, or there are too many.`);
    if (!this.opts.trailers?.has(name)) throw malformedTrailer(`The trailer ${name} was not declared in x-amz-trailer.`);
    this.trailers.set(name, value);
  }

  /** Whether every declared trailer, and a signed trailer's signature, has come. */
  private trailerComplete(): boolean {
    for (const name of this.opts.trailers ?? []) if (!this.trailers.has(name)) return false;
    return !this.opts.signedTrailer || this.trailerSignature !== undefined;
  }

  /** The end of the trailer: every declared trailer came, and a signed trailer's signature matches. */
  private endTrailer(): void {
    for (const name of this.opts.trailers ?? []) {
      if (!this.trailers.has(name)) throw malformedTrailer(`The trailer ${name} declared in x-amz-trailer did not come.`);
    }
    if (this.opts.signedTrailer) {
      if (this.trailerSignature === undefined || !this.signing) throw signatureMismatch('The trailer has no signature.');
      // The trailer headers as a canonical block (sorted, `name:value\n`), chained to the last chunk's signature.
      const canonical = [...this.trailers].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => `${k}:${v}\n`).join('');
      const signs = (algorithm: string) => {
        const toSign = [algorithm, this.signing!.amzDate, this.signing!.scope, this.prevSig, sha256(canonical)].join('\n');
        return safeHexEqual(hmac(this.signing!.key, toSign).toString('hex'), this.trailerSignature!);
      };
      // The SDKs sign with AWS4-HMAC-SHA256-TRAILER; the worked example of AWS's own documentation
      // signs with the chunk algorithm's name. Both are HMACs under the request's key, and neither
      // string can be taken for a chunk's (those have six lines), so both are accepted.
      if (!signs(`${ALGORITHM}-TRAILER`) && !signs(`${ALGORITHM}-PAYLOAD`)) throw signatureMismatch('The trailer signature does not match.');
    } else if (this.trailerSignature !== undefined) {
      throw malformedTrailer('An unsigned trailer carries a signature.');
    }
    if (this.opts.decodedLength !== undefined && this.decodedBytes !== this.opts.decodedLength) {
      throw new S3Error(400, 'IncompleteBody', 'The body is shorter than its x-amz-decoded-content-length.');
    }
    this.state = 'done';
  }

  private checkChunk(): void {
    if (!this.signing) return;
    const toSign = [`${ALGORITHM}-PAYLOAD`, this.signing.amzDate, this.signing.scope, this.prevSig, EMPTY_SHA256, this.chunkHash.digest('hex')].join('\n');
    const expected = hmac(this.signing.key, toSign).toString('hex');
    if (!safeHexEqual(expected, this.chunkSig)) throw signatureMismatch('A chunk signature does not match.');
    this.prevSig = this.chunkSig;
  }
}
