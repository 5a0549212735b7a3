import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { CopyObjectCommand, DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Client as FtpClient } from 'basic-ftp';
import type { FileEntry } from 'ssh2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProtocolListener } from '../../src/protocols/listeners.js';
import { startFtpServer } from '../../src/protocols/ftp/server.js';
import { startS3Server } from '../../src/protocols/s3/server.js';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { call, connectSftp, type SftpSession, startSftp } from '../helpers/sftp.js';
import { basic } from '../webdav/dav-helpers.js';
import { type Case, cases, FIXTURE, FRONT_OPS, FRONTS, GUARDED_BYTES, isHiddenPath, METAS, type Op, parseZip, type Rule, RULES, SILENT_REFUSALS, type Target } from './rule-table.js';

/** The tree as a map: storage-relative path → file bytes, or null for a folder. */
type Tree = Map<string, string | null>;

function fixtureTree(): Tree {
  const t: Tree = new Map();
  for (const [rel, content] of Object.entries(FIXTURE)) {
    const clean = rel.replace(/\/$/, '');
    const parts = clean.split('/');
    for (let i = 1; i < parts.length; i++) t.set(parts.slice(0, i).join('/'), null);
    t.set(clean, rel.endsWith('/') ? null : content);
  }
  return t;
}

/** The bytes of each fixture zip (stored, made once with Info-ZIP), by its marker. */
const zips = new Map<string, Buffer>();
function zipBytes(marker: string): Buffer {
  let out = zips.get(marker);
  if (!out) {
    const { entry, bytes } = parseZip(marker)!;
    const dir = mkdtempSync(path.join(os.tmpdir(), 'atrium-matrix-zip-'));
    writeFileSync(path.join(dir, entry), bytes);
    execFileSync('zip', ['-q', '-0', '-X', 'a.zip', entry], { cwd: dir });
    out = readFileSync(path.join(dir, 'a.zip'));
    rmSync(dir, { recursive: true, force: true });
    zips.set(marker, out);
  }
  return out;
}

function writeTree(root: string, t: Tree): void {
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  for (const [rel, content] of [...t].sort(([a], [b]) => a.localeCompare(b))) {
    if (content === null) mkdirSync(path.join(root, rel), { recursive: true });
    else {
      mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
      writeFileSync(path.join(root, rel), parseZip(content) ? zipBytes(content) : content);
    }
  }
}

function readTree(root: string): Tree {
  const t: Tree = new Map();
  const walk = (dir: string, rel: string) => {
    for (const name of readdirSync(dir)) {
      if (name === '.atrium-tmp') continue;
      const full = path.join(dir, name);
      const r = rel ? `${rel}/${name}` : name;
      if (statSync(full).isDirectory()) {
        t.set(r, null);
        walk(full, r);
      } else {
        const bytes = readFileSync(full);
        t.set(r, [...zips].find(([, z]) => z.equals(bytes))?.[0] ?? bytes.toString('utf8'));
      }
    }
  };
  walk(root, '');
  return t;
}

const sorted = (t: Tree) => [...t].sort(([a], [b]) => a.localeCompare(b));
const under = (t: Tree, rel: string) => [...t.keys()].filter((k) => k === rel || k.startsWith(`${rel}/`));
/** Storage-relative path of a client path below the user's base path `/s/u` (clamped like a file system). */
const relOf = (clientPath: string) => path.posix.join('u', path.posix.normalize(`/${clientPath}`)).replace(/^\/+/, '');

function moveTree(t: Tree, from: string, to: string, keep = false): void {
  for (const k of under(t, from)) {
    t.set(to + k.slice(from.length), t.get(k)!);
    if (!keep) t.delete(k);
  }
}

/** The tree after an allowed operation, as every front must leave it. */
function expectedAfter(op: Op, target: Target, seesHidden = false): Tree {
  const hidden = (k: string) => !seesHidden && isHiddenPath(k);
  const t = fixtureTree();
  const p = relOf(target.path);
  const dst = target.dst ? relOf(target.dst) : '';
  const children = (dir: string) => [...t.keys()].filter((k) => path.posix.dirname(k) === dir);
  switch (op) {
    case 'list':
    case 'read':
    case 'archive_list':
    case 'archive_read':
      break;
    case 'mkdir':
      t.set(p, null);
      break;
    case 'put':
      t.set(p, target.body!);
      break;
    case 'rename':
      moveTree(t, p, path.posix.join(path.posix.dirname(p), target.name!));
      break;
    case 'move':
      moveTree(t, p, path.posix.join(dst, path.posix.basename(p)));
      break;
    case 'copy':
    case 'copy_file':
      moveTree(t, p, path.posix.join(dst, path.posix.basename(p)), true);
      break;
    case 'remove':
      for (const k of under(t, p)) t.delete(k);
      break;
    case 'batch_rename':
      moveTree(t, path.posix.join(p, target.name!), path.posix.join(p, `renamed-${target.name!}`));
      break;
    case 'regex_rename': {
      const re = new RegExp(target.pattern!, 'u');
      for (const k of children(p)) {
        const name = path.posix.basename(k);
        if (hidden(k) || !re.test(name)) continue;
        moveTree(t, k, path.posix.join(p, name.replace(re, target.replacement!)));
      }
      break;
    }
    case 'recursive_move':
      for (const k of under(t, p)) {
        if (t.get(k) === null) continue;
        t.set(path.posix.join(dst, path.posix.basename(k)), t.get(k)!);
        t.delete(k);
      }
      break;
    case 'remove_empty_directory': {
      const onlyFolders = (k: string): boolean => !hidden(k) && t.get(k) === null && children(k).every(onlyFolders);
      for (const k of under(t, p)) if (k !== p && t.has(k) && onlyFolders(k)) for (const x of under(t, k)) t.delete(x);
      break;
    }
  }
  return t;
}

/** Names a listing must show: the folder's entries the user may see. */
function visibleChildren(clientDir: string, seesHidden = false): string[] {
  const dir = relOf(clientDir);
  return [...fixtureTree().keys()].filter((k) => path.posix.dirname(k) === dir && (seesHidden || !isHiddenPath(k))).map((k) => path.posix.basename(k)).sort();
}

/** A front's answer to a read: what it showed, or null when it refused. */
type Shown = string | string[] | null;

interface FrontClient {
  /** list → names, read → bytes; writes → true when accepted. */
  run(op: Op, t: Target): Promise<Shown | boolean>;
}

/** The bucket the S3 front reaches: the users' base path. */
const BUCKET = 'ubase';

describe('one rule matrix across every front (API, /d, /p, WebDAV, SFTP, FTP, search, share links, S3)', () => {
  let s: TestServer;
  let admin: string;
  let box: string;
  let root: string;
  let sftpServer: ProtocolListener;
  let ftpServer: ProtocolListener;
  let s3Server: ProtocolListener;
  const s3Clients: S3Client[] = [];
  const sessions: SftpSession[] = [];
  const ftps: FtpClient[] = [];
  const clients = new Map<string, FrontClient>();
  const results: Array<{ c: Case; ok: boolean; why: string }> = [];

  const post = (url: string, body: unknown, token = admin) => s.api('POST', url, { token, body });

  beforeAll(async () => {
    box = mkdtempSync(path.join(os.tmpdir(), 'atrium-matrix-'));
    root = path.join(box, 'root');
    writeTree(root, fixtureTree());
    s = await startServer(BACKENDS[0]!);
    admin = await s.login();
    expect((await post('/api/admin/storage/create', localStorage('/s', root, { web_proxy: true }))).code).toBe(200);
    for (const m of METAS) expect((await post('/api/admin/meta/create', m)).code).toBe(200);
    expect(
      (await post('/api/admin/setting/save', [{ key: 'sign_all', value: 'false' }, { key: 'search_index', value: 'database' }, { key: 's3_buckets', value: JSON.stringify([{ name: BUCKET, path: '/s/u' }]) }])).code,
    ).toBe(200);
    expect((await post('/api/admin/index/build', {})).code).toBe(200);
    await s.core.search.indexer.idle();
    await s.core.search.indexer.idle();
    sftpServer = await startSftp(s);
    ftpServer = await startFtpServer(s.core, '127.0.0.1:0');
    s3Server = await startS3Server(s.core, 0, '127.0.0.1');
  }, 60_000);

  afterAll(async () => {
    for (const x of sessions) x.end();
    for (const c of ftps) c.close();
    for (const c of s3Clients) c.destroy();
    await s3Server?.close();
    await sftpServer?.close();
    await ftpServer?.close();
    await s?.destroy();
    rmSync(box, { recursive: true, force: true });
  });

  /** The principal of a rule on a front: its own user, or the guest where the front carries a folder password only for the guest. */
  const principalOf = async (rule: Rule, front: string): Promise<{ user: string; pass: string }> => {
    const viaGuest = rule.password !== undefined && (front === 'webdav' || front === 'ftp');
    if (viaGuest) {
      const guest = (await s.api('GET', '/api/admin/user/list', { token: admin })).data.content.find((u: { role: number }) => u.role === 1);
      expect((await post('/api/admin/user/update', { ...guest, base_path: '/s/u', permission: rule.perms, disabled: false })).code).toBe(200);
      return { user: front === 'ftp' ? 'anonymous' : 'guest', pass: rule.password! };
    }
    const name = `m${RULES.indexOf(rule)}`;
    const exists = (await s.api('GET', '/api/admin/user/list', { token: admin })).data.content.some((u: { username: string }) => u.username === name);
    if (!exists) expect((await post('/api/admin/user/create', { username: name, password: 'pw-of-user', base_path: '/s/u', permission: rule.perms })).code).toBe(200);
    return { user: name, pass: 'pw-of-user' };
  };

  const apiClient = (token: string, password: string, front: 'api' | 'd' | 'p' | 'search'): FrontClient => {
    const accepted = (r: { code: number }) => r.code === 200;
    /** API: get, then its raw link; /d and /p: the raw link, signed when the API gave a sign to this principal. */
    const readRaw = async (p: string): Promise<Shown> => {
      const got = await post('/api/fs/get', { path: p, password }, token);
      if (front === 'api' && got.code !== 200) return null;
      const sign = got.code === 200 && got.data.raw_url ? (new URL(got.data.raw_url).searchParams.get('sign') ?? '') : '';
      const full = `/s/u${path.posix.normalize(`/${p}`)}`.split('/').map(encodeURIComponent).join('/');
      const res = await s.inject({ method: 'GET', url: `/${front === 'p' ? 'p' : 'd'}${full}${sign ? `?sign=${sign}` : ''}` });
      // A refusal is an HTTP error status, or (before raw links answered real statuses) an error envelope.
      const envelope = /^application\/json/.test(String(res.headers['content-type'] ?? '')) ? (JSON.parse(res.body) as { code?: number }) : undefined;
      return res.statusCode === 200 && (envelope?.code ?? 200) === 200 ? res.body : null;
    };
    return {
      async run(op, t) {
        const dir = path.posix.dirname(t.path);
        const base = path.posix.basename(t.path);
        switch (op) {
          case 'list': {
            if (front === 'search') {
              const r = await post('/api/fs/search', { parent: t.path, keywords: 'txt', page: 1, per_page: 100, password }, token);
              if (r.code !== 200) return null;
              const parent = `/${path.posix.normalize(`/${t.path}`).replace(/^\/+/, '')}`.replace(/\/$/, '') || '/';
              return (r.data.content as Array<{ parent: string; name: string }>).filter((h) => h.parent.replace(/^\/s\/u/, '') === parent || (parent === '/' && h.parent === '/s/u')).map((h) => h.name).sort();
            }
            const r = await post('/api/fs/list', { path: t.path, password, refresh: false }, token);
            return r.code === 200 ? ((r.data.content ?? []) as Array<{ name: string }>).map((o) => o.name).sort() : null;
          }
          case 'read':
            return readRaw(t.path);
          case 'mkdir':
            return accepted(await post('/api/fs/mkdir', { path: t.path, password }, token));
          case 'put': {
            const res = await s.inject({ method: 'PUT', url: '/api/fs/put', headers: { authorization: token, 'file-path': encodeURIComponent(t.path), password, 'content-type': 'application/octet-stream' }, payload: t.body });
            return res.json().code === 200;
          }
          case 'rename':
            return accepted(await post('/api/fs/rename', { path: t.path, name: t.name, password }, token));
          case 'move':
            return accepted(await post('/api/fs/move', { src_dir: dir, dst_dir: t.dst, names: [base], password }, token));
          case 'copy':
          case 'copy_file':
            return accepted(await post('/api/fs/copy', { src_dir: dir, dst_dir: t.dst, names: [base], password }, token));
          case 'remove':
            return accepted(await post('/api/fs/remove', { dir, names: [base], password }, token));
          case 'batch_rename':
            return accepted(await post('/api/fs/batch_rename', { src_dir: t.path, rename_objects: [{ src_name: t.name, new_name: `renamed-${t.name}` }], password }, token));
          case 'regex_rename':
            return accepted(await post('/api/fs/regex_rename', { src_dir: t.path, src_name_regex: t.pattern, new_name_regex: t.replacement, password }, token));
          case 'recursive_move':
            return accepted(await post('/api/fs/recursive_move', { src_dir: t.path, dst_dir: t.dst, password }, token));
          case 'remove_empty_directory':
            return accepted(await post('/api/fs/remove_empty_directory', { src_dir: t.path, password }, token));
          case 'archive_list': {
            const r = await post('/api/fs/archive/list', { path: t.path, inner_path: '/', password }, token);
            return r.code === 200 ? ((r.data.content ?? []) as Array<{ name: string }>).map((o) => o.name).sort() : null;
          }
          case 'archive_read': {
            const m = await post('/api/fs/archive/meta', { path: t.path, password }, token);
            if (m.code !== 200) return null;
            const full = `/s/u${path.posix.normalize(`/${t.path}`)}`.split('/').map(encodeURIComponent).join('/');
            const res = await s.inject({ method: 'GET', url: `/ad${full}?inner=${encodeURIComponent(t.inner!)}${m.data.sign ? `&sign=${m.data.sign}` : ''}` });
            return res.statusCode === 200 ? res.body : null;
          }
        }
      },
    };
  };

  const davClient = (auth: string): FrontClient => {
    const url = (p: string) => `/dav${p.split('/').map(encodeURIComponent).join('/')}`;
    const dav = (method: string, p: string, headers: Record<string, string> = {}, payload?: string) =>
      s.inject({ method: method as 'GET', url: url(p), headers: { authorization: auth, ...headers }, payload });
    const ok = (r: { statusCode: number }) => r.statusCode >= 200 && r.statusCode < 300;
    return {
      async run(op, t) {
        const dest = (to: string) => ({ destination: `http://localhost${url(to)}`, overwrite: 'F' });
        switch (op) {
          case 'list': {
            const r = await dav('PROPFIND', t.path, { depth: '1' });
            if (r.statusCode !== 207) return null;
            const hrefs = [...r.body.matchAll(/<D:href>([^<]*)<\/D:href>/g)].map((m) => decodeURIComponent(m[1]!).replace(/\/$/, ''));
            return hrefs.slice(1).map((h) => path.posix.basename(h)).sort();
          }
          case 'read': {
            const r = await dav('GET', t.path);
            return r.statusCode === 200 ? r.body : null;
          }
          case 'mkdir':
            return ok(await dav('MKCOL', t.path));
          case 'put':
            return ok(await dav('PUT', t.path, {}, t.body));
          case 'rename':
            return ok(await dav('MOVE', t.path, dest(path.posix.join(path.posix.dirname(t.path), t.name!))));
          case 'move':
            return ok(await dav('MOVE', t.path, dest(path.posix.join(t.dst!, path.posix.basename(t.path)))));
          case 'copy':
          case 'copy_file':
            return ok(await dav('COPY', t.path, dest(path.posix.join(t.dst!, path.posix.basename(t.path)))));
          case 'remove':
            return ok(await dav('DELETE', t.path));
          default:
            throw new Error(`WebDAV has no ${op}`);
        }
      },
    };
  };

  const sftpClient = (x: SftpSession): FrontClient => ({
    async run(op, t) {
      const c = x.sftp;
      const tryOk = (p: Promise<unknown>) => p.then(() => true, () => false);
      switch (op) {
        case 'list':
          return call<FileEntry[]>(c, 'readdir', t.path).then((l) => l.map((e) => e.filename).sort(), () => null);
        case 'read':
          return new Promise<Shown>((resolve) => {
            const chunks: Buffer[] = [];
            c.createReadStream(t.path)
              .on('data', (b: Buffer) => chunks.push(b))
              .on('end', () => resolve(Buffer.concat(chunks).toString()))
              .on('error', () => resolve(null));
          });
        case 'mkdir':
          return tryOk(call(c, 'mkdir', t.path));
        case 'put':
          return new Promise<boolean>((resolve) => {
            const w = c.createWriteStream(t.path);
            w.on('error', () => resolve(false));
            w.on('close', () => resolve(true));
            w.end(t.body);
          });
        case 'rename':
          return tryOk(call(c, 'rename', t.path, path.posix.join(path.posix.dirname(t.path), t.name!)));
        case 'move':
          return tryOk(call(c, 'rename', t.path, path.posix.join(t.dst!, path.posix.basename(t.path))));
        case 'remove':
          return tryOk(call(c, 'unlink', t.path));
        default:
          throw new Error(`SFTP has no ${op}`);
      }
    },
  });

  const ftpClient = (c: FtpClient): FrontClient => ({
    async run(op, t) {
      const tryOk = (p: Promise<unknown>) => p.then(() => true, () => false);
      switch (op) {
        case 'list':
          return c.list(t.path).then((l) => l.map((e) => e.name).sort(), () => null);
        case 'read': {
          const chunks: Buffer[] = [];
          const sink = new Writable({ write: (b, _e, done) => (chunks.push(b as Buffer), done()) });
          return c.downloadTo(sink, t.path).then(() => Buffer.concat(chunks).toString(), () => null);
        }
        case 'mkdir':
          return tryOk(c.send(`MKD ${t.path}`));
        case 'put':
          return tryOk(c.uploadFrom(Readable.from([Buffer.from(t.body!)]), t.path));
        case 'rename':
          return tryOk(c.rename(t.path, path.posix.join(path.posix.dirname(t.path), t.name!)));
        case 'move':
          return tryOk(c.rename(t.path, path.posix.join(t.dst!, path.posix.basename(t.path))));
        case 'remove':
          return tryOk(c.remove(t.path));
        default:
          throw new Error(`FTP has no ${op}`);
      }
    },
  });

  /** A visitor of a share link of the user's whole base path, created by the user, giving the rule's folder password. */
  const shareClient = async (token: string, password: string): Promise<FrontClient> => {
    const made = await post('/api/share/create', { files: ['/s/u'] }, token);
    expect(made.code, made.message).toBe(200);
    const sid = made.data.id as string;
    const link = (prefix: string, p: string, query: Record<string, string> = {}) => {
      const q = new URLSearchParams(query);
      if (password) q.set('folder_pwd', password);
      const text = q.toString();
      return `/${prefix}/${sid}${p.split('/').map(encodeURIComponent).join('/')}${text ? `?${text}` : ''}`;
    };
    const bytes = async (url: string): Promise<Shown> => {
      const res = await s.inject({ method: 'GET', url });
      const envelope = /^application\/json/.test(String(res.headers['content-type'] ?? '')) ? (JSON.parse(res.body) as { code?: number }) : undefined;
      return res.statusCode === 200 && (envelope?.code ?? 200) === 200 ? res.body : null;
    };
    return {
      async run(op, t) {
        const p = t.path.startsWith('/') ? t.path : `/${t.path}`;
        switch (op) {
          case 'list': {
            const r = await s.api('POST', '/api/fs/list', { body: { path: `/@s/${sid}${p}`, password } });
            return r.code === 200 ? ((r.data.content ?? []) as Array<{ name: string }>).map((o) => o.name).sort() : null;
          }
          case 'read':
            return bytes(link('sd', p));
          case 'archive_list': {
            const r = await s.api('POST', '/api/fs/archive/list', { body: { path: `/@s/${sid}${p}`, inner_path: '/', password } });
            return r.code === 200 ? ((r.data.content ?? []) as Array<{ name: string }>).map((o) => o.name).sort() : null;
          }
          case 'archive_read':
            return bytes(link('sad', p, { inner: t.inner! }));
          default:
            return false;
        }
      },
    };
  };

  /** The user's own S3 key (made in the profile), on the bucket of the base path; keys are client paths without the leading `/`. */
  const s3FrontClient = async (token: string): Promise<FrontClient> => {
    const made = await post('/api/me/s3key/create', { title: 'matrix' }, token);
    expect(made.code, made.message).toBe(200);
    const c = new S3Client({
      endpoint: `http://127.0.0.1:${s3Server.port}`,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: made.data.access_key_id as string, secretAccessKey: made.data.secret_access_key as string },
      maxAttempts: 1,
    });
    s3Clients.push(c);
    const keyOf = (p: string) => p.replace(/^\/+/, '');
    const ok = (p: Promise<unknown>) => p.then(() => true, () => false);
    return {
      async run(op, t) {
        const key = keyOf(t.path);
        switch (op) {
          case 'list': {
            const r = await c.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: key ? `${key}/` : '', Delimiter: '/' })).catch(() => null);
            if (!r) return null;
            const names = [...(r.Contents ?? []).map((o) => o.Key!), ...(r.CommonPrefixes ?? []).map((x) => x.Prefix!.replace(/\/$/, ''))];
            return names.map((n) => path.posix.basename(n)).sort();
          }
          case 'read':
            return c.send(new GetObjectCommand({ Bucket: BUCKET, Key: key })).then((r) => r.Body!.transformToString(), () => null);
          case 'mkdir':
            return ok(c.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${key}/`, Body: '' })));
          case 'put':
            return ok(c.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: t.body })));
          case 'copy_file': {
            const dst = `${keyOf(t.dst!)}/${path.posix.basename(key)}`.replace(/^\//, '');
            return ok(c.send(new CopyObjectCommand({ Bucket: BUCKET, Key: dst, CopySource: `${BUCKET}/${key.split('/').map(encodeURIComponent).join('/')}` })));
          }
          case 'remove':
            return ok(c.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: key })));
          default:
            throw new Error(`S3 has no ${op}`);
        }
      },
    };
  };

  /** A front that refused the login: every operation is refused. */
  const refusedLogin: FrontClient = { run: async (op) => (op === 'list' || op === 'read' ? null : false) };

  const clientFor = async (rule: Rule, front: string): Promise<FrontClient> => {
    const key = `${RULES.indexOf(rule)}:${front}`;
    const known = clients.get(key);
    if (known) return known;
    const { user, pass } = await principalOf(rule, front);
    // A refused login refuses every operation; a login that goes through is judged by its operations.
    const login = <T>(p: Promise<T>) => p.then((v) => v, (err: unknown) => {
      if (!rule.loginRefused?.includes(front as never)) throw err;
      return undefined;
    });
    let client: FrontClient;
    if (front === 'webdav') client = davClient(basic(user, pass));
    else if (front === 'sftp') {
      const x = await login(connectSftp(sftpServer.port, { username: user, password: pass }));
      if (x) sessions.push(x);
      client = x ? sftpClient(x) : refusedLogin;
    } else if (front === 'ftp') {
      const c = new FtpClient(10_000);
      ftps.push(c);
      const ok = await login(c.access({ host: '127.0.0.1', port: ftpServer.port, user, password: pass }));
      client = ok ? ftpClient(c) : refusedLogin;
    } else if (front === 'share') client = await shareClient(await s.login(user, pass), rule.password ?? '');
    else if (front === 's3') client = await s3FrontClient(await s.login(user, pass));
    else client = apiClient(await s.login(user, pass), rule.password ?? '', front as 'api');
    clients.set(key, client);
    return client;
  };

  const applySettings = async (rule: Rule) => {
    const wanted = { ignore_system_files: 'false', share_archive_preview: 'true', ...rule.settings };
    expect((await post('/api/admin/setting/save', Object.entries(wanted).map(([key, value]) => ({ key, value })))).code).toBe(200);
  };

  /** Runs one case and says whether the front decided as the table says, from what it showed and what is on disk. */
  const check = async (c: Case): Promise<{ ok: boolean; why: string }> => {
    writeTree(root, fixtureTree());
    const client = await clientFor(c.rule, c.front);
    let answer: Shown | boolean;
    try {
      answer = await client.run(c.op, c.target);
    } catch (err) {
      answer = null;
      if (!String(err).match(/Error|error|refused|denied|550|553/)) return { ok: false, why: `threw ${String(err)}` };
    }
    const disk = readTree(root);
    const text = JSON.stringify(answer);
    const reading = c.op === 'list' || c.op === 'read' || c.op === 'archive_list' || c.op === 'archive_read';
    /** What an allowed read must show. */
    const shown = (): Shown => {
      const archive = parseZip(FIXTURE[relOf(c.target.path)]);
      if (c.op === 'archive_list') return archive ? [archive.entry] : null;
      if (c.op === 'archive_read') return archive && c.target.inner === `/${archive.entry}` ? archive.bytes : null;
      if (c.op === 'read') return FIXTURE[relOf(c.target.path)] ?? null;
      const seen = visibleChildren(c.target.path, c.rule.seesHidden);
      return c.front === 'search' ? seen.filter((n) => n.includes('txt')) : seen;
    };
    const leaked = GUARDED_BYTES.filter((b) => text.includes(b) && !(c.expect === 'allow' && text === JSON.stringify(shown())));
    if (reading) {
      if (JSON.stringify(sorted(disk)) !== JSON.stringify(sorted(fixtureTree()))) return { ok: false, why: 'a read changed the disk' };
      if (c.expect === 'deny') {
        if (leaked.length > 0) return { ok: false, why: `showed ${leaked.join(', ')}` };
        if (answer !== null && !(Array.isArray(answer) && answer.length === 0)) return { ok: false, why: `not refused: ${text}` };
        return { ok: true, why: '' };
      }
      const want = shown();
      return JSON.stringify(answer) === JSON.stringify(want) ? { ok: true, why: '' } : { ok: false, why: `showed ${text}, expected ${JSON.stringify(want)}` };
    }
    const want = c.expect === 'allow' ? expectedAfter(c.op, c.target, c.rule.seesHidden) : fixtureTree();
    const same = JSON.stringify(sorted(disk)) === JSON.stringify(sorted(want));
    if (same && (answer === true) === (c.expect === 'allow')) return { ok: true, why: '' };
    if (same && c.expect === 'deny' && SILENT_REFUSALS[c.front]?.includes(c.op)) return { ok: true, why: '' };
    const diff = [...new Set([...disk.keys(), ...want.keys()])].filter((k) => disk.get(k) !== want.get(k));
    return { ok: false, why: `answered ${text}; disk differs at ${JSON.stringify(diff)}` };
  };

  it('a move between two folders with different passwords needs both (password and dst_password)', async () => {
    writeTree(root, fixtureTree());
    mkdirSync(path.join(root, 'u/pw2'));
    expect((await post('/api/admin/meta/create', { path: '/s/u/pw2', password: 'second-word', p_sub: true })).code).toBe(200);
    try {
      const token = await s.login((await principalOf(RULES[0]!, 'api')).user, 'pw-of-user');
      const move = (body: Record<string, string>) => post('/api/fs/move', { src_dir: '/pw', dst_dir: '/pw2', names: ['c.txt'], ...body }, token);
      expect((await move({ password: 'pw-word' })).code).toBe(403);
      expect((await move({ password: 'second-word', dst_password: 'pw-word' })).code).toBe(200);
      expect(readFileSync(path.join(root, 'u/pw2/c.txt'), 'utf8')).toBe('PW-BYTES-7a1');
    } finally {
      const metas = (await s.api('GET', '/api/admin/meta/list', { token: admin })).data.content as Array<{ id: number; path: string }>;
      const id = metas.find((m) => m.path === '/s/u/pw2')!.id;
      expect((await s.api('POST', `/api/admin/meta/delete?id=${id}`, { token: admin })).code).toBe(200);
    }
  });

  it('every operation × every rule × every front reaches the same decision, on disk', async () => {
    const all = cases();
    let lastRule: Rule | undefined;
    for (const c of all) {
      if (c.rule !== lastRule) await applySettings(c.rule);
      lastRule = c.rule;
      const { ok, why } = await check(c);
      results.push({ c, ok, why });
    }
    const failed = results.filter((r) => !r.ok).map((r) => `${r.c.rule.name} | ${r.c.op} | ${r.c.front} | expected ${r.c.expect}: ${r.why}`);
    const ops = new Set(all.map((c) => c.op)).size;
    console.log(`rule matrix: ${RULES.length} rules × ${ops} operations × ${FRONTS.length} fronts → ${all.length} cases (${FRONTS.map((f) => `${f} ${all.filter((c) => c.front === f).length}`).join(', ')})`);
    expect(failed).toEqual([]);
    // Every front and every operation it offers is exercised by the table.
    for (const f of FRONTS) for (const op of FRONT_OPS[f]) expect(all.some((c) => c.front === f && c.op === op), `${f} ${op}`).toBe(true);
  }, 300_000);
});
