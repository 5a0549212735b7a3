// AWS Signature V4 query-string presigning of a GET or PUT (the SDK's presigner package is not
// published at the pinned SDK version): https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html

import { createHash, createHmac } from 'node:crypto';

export interface PresignInput {
  /** Full object URL without query (path-style or virtual-host style). */
  url: URL;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  expiresSeconds: number;
  /** Extra query parameters to sign (e.g. response-content-disposition). */
  query?: Record<string, string>;
  /** Headers besides host the request must carry with exactly these values (lower-case names). */
  headers?: Record<string, string>;
  now?: Date;
}

/** RFC 3986 encoding, as SigV4 wants it (encodeURIComponent leaves !'()* alone). */
export const rfc3986 = (s: string): string => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();

/** A presigned download of the object (links). */
export const presignGet = (input: PresignInput): string => presign('GET', input);

/**
 * A presigned upload of the object (direct uploads): the signature covers the method, the host,
 * the key's path and the headers given (a direct upload signs its Content-Length), so the URL
 * stores that one object at that size and nothing else; the body itself is not signed
 * (UNSIGNED-PAYLOAD).
 */
export const presignPut = (input: PresignInput): string => presign('PUT', input);

function presign(method: 'GET' | 'PUT', input: PresignInput): string {
  const now = input.now ?? new Date();
  const amzDate = now.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  const day = amzDate.slice(0, 8);
  const scope = `${day}/${input.region}/s3/aws4_request`;
  const params: Record<string, string> = {
    ...input.query,
    'X-Amz-Algorithm': 'AWS4-HMAC-SHA256',
    'X-Amz-Credential': `${input.accessKeyId}/${scope}`,
    'X-Amz-Date': amzDate,
    'X-Amz-Expires': String(input.expiresSeconds),
    'X-Amz-SignedHeaders': '',
  };
  const headers: Record<string, string> = { ...input.headers, host: input.url.host };
  const names = Object.keys(headers).sort();
  params['X-Amz-SignedHeaders'] = names.join(';');
  if (input.sessionToken) params['X-Amz-Security-Token'] = input.sessionToken;
  const query = Object.keys(params)
    .sort()
    .map((k) => `${rfc3986(k)}=${rfc3986(params[k]!)}`)
    .join('&');
  const canonical = [method, input.url.pathname, query, ...names.map((n) => `${n}:${headers[n]!.trim()}`), '', names.join(';'), 'UNSIGNED-PAYLOAD'].join('\n');
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, createHash('sha256').update(canonical).digest('hex')].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${input.secretAccessKey}`, day), input.region), 's3'), 'aws4_request');
  const signature = createHmac('sha256', key).update(toSign).digest('hex');
  return `${input.url.origin}${input.url.pathname}?${query}&X-Amz-Signature=${signature}`;
}
