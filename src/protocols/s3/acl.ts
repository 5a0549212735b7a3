import { type S3Call, readRaw } from './call.js';
import { S3Error } from './errors.js';
import type { Principal } from './principal.js';
import { notImplemented } from './subresources.js';
import { escapeXml, parseXml } from './xml.js';

/**
 * Access control lists: the server's rules (permission bits, hide, password, write rules) decide
 * who may do what, so every bucket and object has one ACL, its owner's full control. PUT of an
 * ACL is accepted when it says no more than that or names a canned ACL, and changes nothing.
 */
const CANNED = new Set(['private', 'public-read', 'public-read-write', 'authenticated-read', 'aws-exec-read', 'bucket-owner-read', 'bucket-owner-full-control', 'log-delivery-write']);
const GRANT_HEADERS = ['x-amz-grant-read', 'x-amz-grant-write', 'x-amz-grant-read-acp', 'x-amz-grant-write-acp', 'x-amz-grant-full-control'];

const ownerOf = (p: Principal) => ({ id: String(p.user.id), name: p.user.username });

/** The AccessControlPolicy of anything the principal owns (rendered here: the grantee carries an `xsi:type` attribute). */
export function aclDocument(p: Principal): string {
  const { id, name } = ownerOf(p);
  const who = `<ID>${escapeXml(id)}</ID><DisplayName>${escapeXml(name)}</DisplayName>`;
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n<AccessControlPolicy xmlns="http://s3.amazonaws.com/doc/2006-03-01/">' +
    `<Owner>${who}</Owner><AccessControlList><Grant>` +
    `<Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="CanonicalUser">${who}</Grantee>` +
    '<Permission>FULL_CONTROL</Permission></Grant></AccessControlList></AccessControlPolicy>'
  );
}

const malformedAcl = () => new S3Error(400, 'MalformedACLError', 'The XML you provided was not well-formed or did not validate against our published schema.');

/** An AccessControlPolicy body: accepted only when every grant is the owner's FULL_CONTROL. */
function checkPolicy(p: Principal, body: Record<string, unknown>): void {
  const policy = body.AccessControlPolicy as { AccessControlList?: { Grant?: unknown[] } | string } | undefined;
  if (typeof policy !== 'object' || policy === null) throw malformedAcl();
  const list = policy.AccessControlList;
  const grants = typeof list === 'object' && list !== null ? (list.Grant ?? []) : [];
  const owner = ownerOf(p).id;
  for (const g of grants) {
    const { Grantee, Permission } = (g ?? {}) as { Grantee?: { ID?: unknown }; Permission?: unknown };
    if (typeof Grantee !== 'object' || Grantee === null || Permission === undefined) throw malformedAcl();
    if (String(Grantee.ID ?? '') !== owner || Permission !== 'FULL_CONTROL') throw notImplemented('grants other than the owner\'s FULL_CONTROL');
  }
}

/** PutObjectAcl / PutBucketAcl: a canned ACL (`x-amz-acl`) or a policy of the owner's full control, kept as it is. */
export async function putAcl(c: S3Call): Promise<unknown> {
  const h = c.req.headers;
  if (GRANT_HEADERS.some((g) => h[g] !== undefined)) throw notImplemented('x-amz-grant-* headers');
  const canned = h['x-amz-acl'];
  if (canned !== undefined && !CANNED.has(String(canned))) throw new S3Error(400, 'InvalidArgument', `The canned ACL ${String(canned)} is not one of S3's.`);
  const body = await readRaw(c.req);
  if (body.length > 0) {
    if (canned !== undefined) throw new S3Error(400, 'UnexpectedContent', 'This request does not support content together with x-amz-acl.');
    checkPolicy(c.principal, parseXml(body));
  } else if (canned === undefined) {
    throw new S3Error(400, 'MissingSecurityHeader', 'Your request was missing a required header: x-amz-acl (or an AccessControlPolicy body).');
  }
  return c.reply.code(200).send();
}
