import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  DeleteObjectTaggingCommand,
  GetBucketAclCommand,
  GetBucketLocationCommand,
  GetBucketVersioningCommand,
  GetObjectAclCommand,
  GetObjectCommand,
  GetObjectTaggingCommand,
  PutBucketAclCommand,
  PutObjectAclCommand,
  PutObjectCommand,
  PutObjectTaggingCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProtocolListener } from '../../src/protocols/listeners.js';
import { SUBRESOURCES } from '../../src/protocols/s3/subresources.js';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { requireProgram } from '../webdav/dav-helpers.js';
import { client, KEY_ID, SECRET, signedRequest, startS3 } from './s3-helpers.js';

const run = promisify(execFile);
const hasS3cmd = requireProgram('s3cmd', 's3cmd info and setacl against the S3 server');
const CANARY = 'canary bytes, never to change\n';
const TAGGING = '<Tagging><TagSet><Tag><Key>colour</Key><Value>blue</Value></Tag></TagSet></Tagging>';

/** Every file below a folder with its bytes (what must not change). */
function snapshot(dir: string, rel = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(path.join(dir, rel)).sort()) {
    const p = path.join(rel, name);
    if (statSync(path.join(dir, p)).isDirectory()) Object.assign(out, snapshot(dir, p));
    else out[p] = readFileSync(path.join(dir, p), 'utf8');
  }
  return out;
}

/** What the server answers per sub-resource, scope and method when it is implemented (every other: 501). */
const IMPLEMENTED: Record<string, string[]> = {
  'object acl': ['GET', 'PUT'],
  'bucket acl': ['GET', 'PUT'],
  'object tagging': ['GET', 'PUT', 'DELETE'],
  'bucket location': ['GET'],
  'bucket versioning': ['GET'],
  'bucket uploads': ['GET'],
  'object uploads': ['POST'],
  'object uploadId': ['GET', 'PUT', 'POST', 'DELETE'],
  'object partNumber': ['GET'],
  'bucket delete': ['POST'],
};

describe('S3 sub-resources never reach the object or bucket operation', () => {
  let s: TestServer;
  let root: string;
  let listener: ProtocolListener;
  let endpoint: string;
  let s3: S3Client;

  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!);
    root = makeTree({ 'bkt/canary.txt': CANARY, 'bkt/dir/inner.txt': 'inner', 'bkt/locked/secret.txt': 'secret', 'bkt/zz.txt': 'last' });
    const admin = await s.login();
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/disk', root) })).code).toBe(200);
    expect((await s.api('POST', '/api/admin/meta/create', { token: admin, body: { path: '/disk/bkt/locked', password: 'pw', p_sub: true, hide: '', readme: '', header: '' } })).code).toBe(200);
    ({ listener, endpoint } = await startS3(s, [{ name: 'bkt', path: '/disk/bkt' }]));
    s3 = client(endpoint);
  });
  afterAll(async () => {
    s3?.destroy();
    await listener?.close();
    await s?.destroy();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('every sub-resource of the S3 API × GET, HEAD, PUT, POST, DELETE on an object and a bucket: implemented or 501, the bytes unchanged', async () => {
    const before = snapshot(root);
    expect(before['bkt/canary.txt']).toBe(CANARY);
    const unexpected: string[] = [];
    for (const name of SUBRESOURCES) {
      const query = name === 'uploadId' ? 'uploadId=nope' : name === 'partNumber' ? 'partNumber=1' : name;
      for (const scope of ['object', 'bucket'] as const) {
        for (const method of ['GET', 'HEAD', 'PUT', 'POST', 'DELETE']) {
          const target = scope === 'object' ? '/bkt/canary.txt' : '/bkt';
          const body = method === 'PUT' || method === 'POST' ? TAGGING : '';
          const r = await signedRequest(endpoint, method, `${target}?${query}`, { body, headers: body ? { 'content-type': 'application/xml' } : {} });
          const implemented = IMPLEMENTED[`${scope} ${name}`]?.includes(method === 'HEAD' && name === 'partNumber' ? 'GET' : method) ?? false;
          const label = `${method} ${target}?${query} → ${r.status}`;
          if (r.status >= 500 && r.status !== 501) unexpected.push(`${label} (a server error)`);
          if (!implemented && r.status !== 501) unexpected.push(`${label} (not implemented: 501 expected)`);
          if (r.status >= 400 && method !== 'HEAD' && !/<Code>\w+<\/Code>/.test(r.body)) unexpected.push(`${label} without an S3 error document`);
          if (r.status === 501 && method !== 'HEAD') expect(r.body).toContain('<Code>NotImplemented</Code>');
          // A GET of a sub-resource is never the object's bytes (but its part 1, which is the object).
          if (method === 'GET' && name !== 'partNumber') expect(r.body).not.toContain(CANARY.trim());
        }
      }
    }
    expect(unexpected).toEqual([]);
    expect(snapshot(root)).toEqual(before);
  }, 120_000);

  it('object tagging: put, get, delete through the SDK; the object is untouched and its tags go with it', async () => {
    await s3.send(new PutObjectTaggingCommand({ Bucket: 'bkt', Key: 'canary.txt', Tagging: { TagSet: [{ Key: 'colour', Value: 'blue' }, { Key: 'size', Value: '' }] } }));
    expect(readFileSync(path.join(root, 'bkt/canary.txt'), 'utf8')).toBe(CANARY);
    const got = await s3.send(new GetObjectTaggingCommand({ Bucket: 'bkt', Key: 'canary.txt' }));
    expect(got.TagSet).toEqual([{ Key: 'colour', Value: 'blue' }, { Key: 'size', Value: '' }]);
    await s3.send(new DeleteObjectTaggingCommand({ Bucket: 'bkt', Key: 'canary.txt' }));
    expect(existsSync(path.join(root, 'bkt/canary.txt'))).toBe(true);
    expect(readFileSync(path.join(root, 'bkt/canary.txt'), 'utf8')).toBe(CANARY);
    expect((await s3.send(new GetObjectTaggingCommand({ Bucket: 'bkt', Key: 'canary.txt' }))).TagSet ?? []).toEqual([]);
    await expect(s3.send(new GetObjectTaggingCommand({ Bucket: 'bkt', Key: 'missing.txt' }))).rejects.toMatchObject({ name: 'NoSuchKey' });
    const eleven = Array.from({ length: 11 }, (_, i) => ({ Key: `k${i}`, Value: 'v' }));
    await expect(s3.send(new PutObjectTaggingCommand({ Bucket: 'bkt', Key: 'canary.txt', Tagging: { TagSet: eleven } }))).rejects.toMatchObject({ name: 'InvalidTag' });
    await expect(s3.send(new PutObjectTaggingCommand({ Bucket: 'bkt', Key: 'canary.txt', Tagging: { TagSet: [{ Key: 'a', Value: '1' }, { Key: 'a', Value: '2' }] } }))).rejects.toMatchObject({ name: 'InvalidTag' });

    // PutObject's x-amz-tagging, CopyObject's COPY (default) and REPLACE, a new PUT without tags, and DeleteObject.
    await s3.send(new PutObjectCommand({ Bucket: 'bkt', Key: 't/one.txt', Body: 'one', Tagging: 'project=atrium&stage=a%20b' }));
    expect((await s3.send(new GetObjectTaggingCommand({ Bucket: 'bkt', Key: 't/one.txt' }))).TagSet).toEqual([{ Key: 'project', Value: 'atrium' }, { Key: 'stage', Value: 'a b' }]);
    await s3.send(new CopyObjectCommand({ Bucket: 'bkt', Key: 't/two.txt', CopySource: 'bkt/t/one.txt' }));
    expect((await s3.send(new GetObjectTaggingCommand({ Bucket: 'bkt', Key: 't/two.txt' }))).TagSet).toEqual([{ Key: 'project', Value: 'atrium' }, { Key: 'stage', Value: 'a b' }]);
    await s3.send(new CopyObjectCommand({ Bucket: 'bkt', Key: 't/three.txt', CopySource: 'bkt/t/one.txt', TaggingDirective: 'REPLACE', Tagging: 'x=y' }));
    expect((await s3.send(new GetObjectTaggingCommand({ Bucket: 'bkt', Key: 't/three.txt' }))).TagSet).toEqual([{ Key: 'x', Value: 'y' }]);
    await s3.send(new PutObjectCommand({ Bucket: 'bkt', Key: 't/two.txt', Body: 'two, again' }));
    expect((await s3.send(new GetObjectTaggingCommand({ Bucket: 'bkt', Key: 't/two.txt' }))).TagSet ?? []).toEqual([]);
    await s3.send(new DeleteObjectCommand({ Bucket: 'bkt', Key: 't/one.txt' }));
    expect(await s.core.repos.objectTags.get('/disk/bkt/t/one.txt')).toBeUndefined();
    expect(await s.core.repos.objectTags.get('/disk/bkt/t/three.txt')).toMatchObject({ tags: [['x', 'y']] });
    // A file written again by another front is another object: the tags of the old one are not its.
    writeFileSync(path.join(root, 'bkt/t/three.txt'), 'written on disk, longer than before');
    await s.core.fs.invalidate('/disk/bkt/t', false);
    expect((await s3.send(new GetObjectTaggingCommand({ Bucket: 'bkt', Key: 't/three.txt' }))).TagSet ?? []).toEqual([]);
  });

  it('ACLs: the owner’s full control for objects and buckets; canned ACLs accepted and kept as they are; other grants NotImplemented', async () => {
    const acl = await s3.send(new GetObjectAclCommand({ Bucket: 'bkt', Key: 'canary.txt' }));
    expect(acl.Owner?.DisplayName).toBe('admin');
    expect(acl.Grants).toEqual([{ Grantee: { ID: acl.Owner?.ID, DisplayName: 'admin', Type: 'CanonicalUser' }, Permission: 'FULL_CONTROL' }]);
    expect((await s3.send(new GetBucketAclCommand({ Bucket: 'bkt' }))).Grants?.[0]?.Permission).toBe('FULL_CONTROL');
    await s3.send(new PutObjectAclCommand({ Bucket: 'bkt', Key: 'canary.txt', ACL: 'private' }));
    await s3.send(new PutObjectAclCommand({ Bucket: 'bkt', Key: 'canary.txt', AccessControlPolicy: { Owner: acl.Owner, Grants: acl.Grants } }));
    await s3.send(new PutBucketAclCommand({ Bucket: 'bkt', ACL: 'public-read' }));
    await expect(
      s3.send(new PutObjectAclCommand({ Bucket: 'bkt', Key: 'canary.txt', AccessControlPolicy: { Owner: acl.Owner, Grants: [{ Grantee: { Type: 'Group', URI: 'http://acs.amazonaws.com/groups/global/AllUsers' }, Permission: 'READ' }] } })),
    ).rejects.toMatchObject({ name: 'NotImplemented', $metadata: { httpStatusCode: 501 } });
    await expect(s3.send(new PutObjectAclCommand({ Bucket: 'bkt', Key: 'canary.txt', GrantRead: 'uri="http://acs.amazonaws.com/groups/global/AllUsers"' }))).rejects.toMatchObject({ name: 'NotImplemented' });
    await expect(s3.send(new PutObjectAclCommand({ Bucket: 'bkt', Key: 'missing.txt', ACL: 'private' }))).rejects.toMatchObject({ name: 'NoSuchKey' });
    expect(readFileSync(path.join(root, 'bkt/canary.txt'), 'utf8')).toBe(CANARY);
    // The guest (no signature) may not change an ACL.
    const anon = await fetch(`${endpoint}/bkt/canary.txt?acl`, { method: 'PUT', headers: { 'x-amz-acl': 'private' } });
    expect(anon.status).toBe(403);
  });

  it('GetBucketLocation, GetBucketVersioning (not enabled); a version other than null is refused and deletes nothing', async () => {
    const loc = await s3.send(new GetBucketLocationCommand({ Bucket: 'bkt' }));
    expect(loc.LocationConstraint ?? '').toBe('');
    expect((await s3.send(new GetBucketVersioningCommand({ Bucket: 'bkt' }))).Status).toBeUndefined();
    await expect(s3.send(new DeleteObjectCommand({ Bucket: 'bkt', Key: 'canary.txt', VersionId: '3HL4kqtJlcpXroDTDmJ' }))).rejects.toMatchObject({ name: 'InvalidArgument' });
    await expect(s3.send(new GetObjectCommand({ Bucket: 'bkt', Key: 'canary.txt', VersionId: 'other' }))).rejects.toMatchObject({ name: 'InvalidArgument' });
    const current = await s3.send(new GetObjectCommand({ Bucket: 'bkt', Key: 'canary.txt', VersionId: 'null' }));
    expect(await current.Body?.transformToString()).toBe(CANARY);
    const part = await signedRequest(endpoint, 'GET', '/bkt/canary.txt?partNumber=2');
    expect(part.status).toBe(416);
    expect(part.body).toContain('<Code>InvalidPartNumber</Code>');
    expect(readFileSync(path.join(root, 'bkt/canary.txt'), 'utf8')).toBe(CANARY);
  });

  it('XML bodies with a DOCTYPE are MalformedXML (no entity is expanded); an empty Content-Type stores with the default type', async () => {
    const bomb = '<?xml version="1.0"?><!DOCTYPE t [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><Tagging><TagSet><Tag><Key>k</Key><Value>&b;</Value></Tag></TagSet></Tagging>';
    const r = await signedRequest(endpoint, 'PUT', '/bkt/canary.txt?tagging', { body: bomb });
    expect(r.status).toBe(400);
    expect(r.body).toContain('<Code>MalformedXML</Code>');
    expect((await s3.send(new GetObjectTaggingCommand({ Bucket: 'bkt', Key: 'canary.txt' }))).TagSet ?? []).toEqual([]);
    const del = await signedRequest(endpoint, 'POST', '/bkt?delete', { body: '<!DOCTYPE Delete><Delete><Object><Key>canary.txt</Key></Object></Delete>' });
    expect(del.status).toBe(400);
    expect(del.body).toContain('<Code>MalformedXML</Code>');
    expect(readFileSync(path.join(root, 'bkt/canary.txt'), 'utf8')).toBe(CANARY);

    const put = await signedRequest(endpoint, 'PUT', '/bkt/typeless.txt', { body: 'no type', headers: { 'content-type': '' } });
    expect(put.status).toBe(200);
    expect(readFileSync(path.join(root, 'bkt/typeless.txt'), 'utf8')).toBe('no type');
    const got = await s3.send(new GetObjectCommand({ Bucket: 'bkt', Key: 'typeless.txt' }));
    expect(got.ContentType).toMatch(/^text\/plain/);
  });

  it('every x-amz-* header must be signed: an unsigned x-amz-copy-source on a presigned PUT is refused and copies nothing', async () => {
    const { presign } = await import('./s3-helpers.js');
    const url = await presign(endpoint, 'PUT', 'bkt/upload.txt', { expiresIn: 300 });
    const hijack = await fetch(url, { method: 'PUT', headers: { 'x-amz-copy-source': '/bkt/locked/secret.txt' }, body: 'x' });
    expect(hijack.status).toBe(403);
    expect(await hijack.text()).toContain('<Code>AccessDenied</Code>');
    expect(existsSync(path.join(root, 'bkt/upload.txt'))).toBe(false);
    const plain = await fetch(url, { method: 'PUT', body: 'by the presigned URL' });
    expect(plain.status).toBe(200);
    expect(readFileSync(path.join(root, 'bkt/upload.txt'), 'utf8')).toBe('by the presigned URL');
    // With the Authorization header: a header added after signing.
    const added = await signedRequest(endpoint, 'PUT', '/bkt/upload.txt', { body: 'again', tamper: (h) => (h['x-amz-meta-mtime'] = '1000') });
    expect(added.status).toBe(403);
    expect(added.body).toContain('not signed: x-amz-meta-mtime');
    expect(readFileSync(path.join(root, 'bkt/upload.txt'), 'utf8')).toBe('by the presigned URL');
    s.core.limiter.succeed('127.0.0.1');
  });

  it('ListObjectsV2 without a delimiter leaves a password folder out for a user without its password; the folder itself is refused', async () => {
    const admin = await s.login();
    expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'lister', password: 'pass word 1', permission: 0, base_path: '/disk' } })).code).toBe(200);
    const token = await s.login('lister', 'pass word 1');
    const made = await s.api('POST', '/api/me/s3key/create', { token, body: { title: 'cli' } });
    const user = client(endpoint, { keyId: made.data.access_key_id as string, secret: made.data.secret_access_key as string });
    try {
      const { ListObjectsV2Command } = await import('@aws-sdk/client-s3');
      const all = await user.send(new ListObjectsV2Command({ Bucket: 'bkt' }));
      const keys = all.Contents?.map((c) => c.Key) ?? [];
      expect(keys).toContain('canary.txt');
      expect(keys).toContain('dir/inner.txt');
      expect(keys).toContain('zz.txt');
      expect(keys.filter((k) => k!.startsWith('locked/'))).toEqual([]);
      const top = await user.send(new ListObjectsV2Command({ Bucket: 'bkt', Delimiter: '/' }));
      expect(top.CommonPrefixes?.map((p) => p.Prefix)).toContain('locked/');
      await expect(user.send(new ListObjectsV2Command({ Bucket: 'bkt', Prefix: 'locked/' }))).rejects.toMatchObject({ name: 'AccessDenied' });
    } finally {
      user.destroy();
    }
  });

  it.runIf(hasS3cmd)('s3cmd info of an object and a bucket, setacl --acl-private; --acl-public is refused; the bytes stay', async () => {
    const work = mkdtempSync(path.join(os.tmpdir(), 'atrium-s3cmd-'));
    try {
      const host = endpoint.replace('http://', '');
      const cfg = path.join(work, 's3cfg');
      writeFileSync(cfg, `[default]\naccess_key = ${KEY_ID}\nsecret_key = ${SECRET}\nhost_base = ${host}\nhost_bucket = ${host}\nuse_https = False\nsignature_v2 = False\nbucket_location = us-east-1\n`);
      const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_')));
      const s3cmd = (...args: string[]) => run('s3cmd', ['-c', cfg, ...args], { env, timeout: 60_000 });
      const info = await s3cmd('info', 's3://bkt/canary.txt');
      expect(info.stdout).toContain(`File size: ${CANARY.length}`);
      expect(info.stdout).toMatch(/ACL:\s+admin: FULL_CONTROL/);
      const bucket = await s3cmd('info', 's3://bkt');
      expect(bucket.stdout).toMatch(/Policy:\s+none/);
      expect(bucket.stdout).toMatch(/CORS:\s+none/);
      expect(bucket.stdout).toMatch(/ACL:\s+admin: FULL_CONTROL/);
      await s3cmd('setacl', '--acl-private', 's3://bkt/canary.txt');
      await expect(s3cmd('setacl', '--acl-public', 's3://bkt/canary.txt')).rejects.toMatchObject({ stderr: expect.stringContaining('NotImplemented') });
      expect(readFileSync(path.join(root, 'bkt/canary.txt'), 'utf8')).toBe(CANARY);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }, 120_000);
});
