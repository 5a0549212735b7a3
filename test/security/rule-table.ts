/**
 * The one table of the cross-front rule matrix (rule-matrix.test.ts): every rule, the operations
 * it governs with their targets, and the decision every front must reach. The test generates one
 * case per rule × operation × front from it and checks names and bytes on disk, not only codes.
 */

/** Permission bits of wire-api.md §3.3 the table uses. */
export const BIT = {
  SEE_HIDES: 1,
  ACCESS_WITHOUT_PASSWORD: 2,
  WRITE: 8,
  RENAME: 16,
  MOVE: 32,
  COPY: 64,
  REMOVE: 128,
  WEBDAV_READ: 256,
  WEBDAV_MANAGE: 512,
  FTP_READ: 1024,
  FTP_WRITE: 2048,
  /** Reading inside archives (archive listings, entry links). */
  READ_ARCHIVES: 4096,
  /** Held by every matrix user: the share front is a share of the user's whole base path. */
  SHARE: 16384,
} as const;
/** Every bit of the table except the two that lift rules (see hidden, access without password). */
export const ALL_BITS = Object.values(BIT).reduce((a, b) => a | b, 0) & ~(BIT.SEE_HIDES | BIT.ACCESS_WITHOUT_PASSWORD);

export type Op =
  | 'list'
  | 'read'
  | 'mkdir'
  | 'put'
  | 'rename'
  | 'move'
  | 'copy'
  /** A single file copied (S3's CopyObject copies objects, not folders). */
  | 'copy_file'
  | 'remove'
  | 'batch_rename'
  | 'regex_rename'
  | 'recursive_move'
  | 'remove_empty_directory'
  /** The entries at the root of an archive (`/api/fs/archive/list`). */
  | 'archive_list'
  /** One entry's bytes (`/ad` after the archive's meta for the API, `/sad` for share visitors). */
  | 'archive_read';
/**
 * `share`: a visitor of a share link of the user's base path (`/@s/<id>` listings, `/sd`
 * downloads, archive listings and `/sad` entries), presenting the rule's folder password.
 * `s3`: the user's own S3 access key on a bucket of the user's base path.
 */
export type Front = 'api' | 'd' | 'p' | 'webdav' | 'sftp' | 'ftp' | 'search' | 'share' | 's3';
export const FRONTS: Front[] = ['api', 'd', 'p', 'webdav', 'sftp', 'ftp', 'search', 'share', 's3'];

/**
 * What each front can be asked to do (SFTP and FTP have no copy; raw links only read; search only
 * finds; S3 has no rename or move, and copies objects, not folders).
 */
export const FRONT_OPS: Record<Front, Op[]> = {
  api: ['list', 'read', 'mkdir', 'put', 'rename', 'move', 'copy', 'copy_file', 'remove', 'batch_rename', 'regex_rename', 'recursive_move', 'remove_empty_directory', 'archive_list', 'archive_read'],
  d: ['read'],
  p: ['read'],
  webdav: ['list', 'read', 'mkdir', 'put', 'rename', 'move', 'copy', 'copy_file', 'remove'],
  sftp: ['list', 'read', 'mkdir', 'put', 'rename', 'move', 'remove'],
  ftp: ['list', 'read', 'mkdir', 'put', 'rename', 'move', 'remove'],
  search: ['list'],
  share: ['list', 'read', 'archive_list', 'archive_read'],
  s3: ['list', 'read', 'mkdir', 'put', 'copy_file', 'remove'],
};
export const WRITE_FRONTS: Front[] = ['api', 'webdav', 'sftp', 'ftp', 's3'];
/**
 * Operations whose refusal a front answers as success, by its protocol's rules: S3's DeleteObject
 * answers 204 for a key it does not show (a hidden key, or one outside the bucket, is "not there").
 * There the disk alone tells the refusal.
 */
export const SILENT_REFUSALS: Partial<Record<Front, Op[]>> = { s3: ['remove'] };

/** An operation's target, as client paths below the user's base path `/s/u`. */
export interface Target {
  path: string;
  /** rename, batch_rename: the new name; regex_rename: the pattern and its replacement. */
  name?: string;
  pattern?: string;
  replacement?: string;
  /** move, copy, recursive_move: the destination folder. */
  dst?: string;
  /** put: the bytes. */
  body?: string;
  /** archive_read: the entry inside the archive. */
  inner?: string;
}

export type Decision = 'allow' | 'deny';

export interface Rule {
  name: string;
  /** The user's permission bits (plus the front bits in ALL_BITS unless removed). */
  perms: number;
  /** The folder password the principal presents (fronts that can carry none skip the rule). */
  password?: string;
  /** Settings turned on for this rule. */
  settings?: Record<string, string>;
  ops: Partial<Record<Op, { target: Target; expect: Decision }>>;
  /** Fronts where the decision differs, by design, from `expect`. */
  frontExpect?: Partial<Record<Front, Decision>>;
  /** Fronts that do not apply to this rule (e.g. raw links have no user, so no base path). */
  skip?: Front[];
  /** The user holds the see-hidden bit: listings and effects include hidden entries. */
  seesHidden?: boolean;
  /** Fronts whose login the user's bits refuse (the test checks the refusal, every operation denied). */
  loginRefused?: Front[];
}

/**
 * A zip archive in the fixture, written as a real (stored) zip by the matrix test: `ZIP:<entry>=<bytes>`.
 * Its entry's bytes show up raw in the file, so a refused read of the archive leaks them too.
 */
export const zipOf = (entry: string, bytes: string) => `ZIP:${entry}=${bytes}`;
export const parseZip = (content: string | undefined): { entry: string; bytes: string } | undefined => {
  const m = /^ZIP:([^=]+)=(.*)$/s.exec(content ?? '');
  return m ? { entry: m[1]!, bytes: m[2]! } : undefined;
};

/** Storage root layout (relative to the storage mounted at /s); the user's base path is /s/u. */
export const FIXTURE: Record<string, string> = {
  'u/pub/a.txt': 'A-BYTES-pub',
  'u/pub/arc.zip': zipOf('in.txt', 'ARC-BYTES-pub'),
  'u/pub/sub/b.txt': 'B-BYTES-pub',
  'u/pub/empty/': '',
  'u/dst/': '',
  'u/hid/secret.txt': 'HIDDEN-BYTES-c31',
  'u/hid/secret.zip': zipOf('in.txt', 'ARC-HIDDEN-8e1'),
  'u/hid/secret-empty/': '',
  'u/hid/open.txt': 'OPEN-BYTES-hid',
  'u/hid/inner/secret-deep.txt': 'HIDDEN-DEEP-9d2',
  'u/pw/c.txt': 'PW-BYTES-7a1',
  'u/pw/arc.zip': zipOf('in.txt', 'ARC-PW-BYTES-3f0'),
  'u/pw/empty/': '',
  'u/wr/': '',
  'other/o.txt': 'OUTSIDE-BYTES-e55',
};
/** Rules (path relative to the storage) the matrix installs. */
export const METAS = [
  { path: '/s/u/hid', hide: '^secret', h_sub: true },
  { path: '/s/u/pw', password: 'pw-word', p_sub: true },
  { path: '/s/u/wr', write: true, w_sub: true },
];
export const FOLDER_PASSWORD = 'pw-word';
/** What a user without the see-hidden bit may not see (storage-relative paths). */
export const isHiddenPath = (rel: string) => rel.startsWith('u/hid/') && rel.split('/').slice(2).some((seg) => seg.startsWith('secret'));
/** Bytes no refused read may ever show. */
export const GUARDED_BYTES = ['HIDDEN-BYTES-c31', 'HIDDEN-DEEP-9d2', 'PW-BYTES-7a1', 'OUTSIDE-BYTES-e55', 'ARC-PW-BYTES-3f0', 'ARC-HIDDEN-8e1'];

const pub = (what: Partial<Record<Op, Decision>>, all: Decision = 'allow') => {
  const targets: Record<Op, Target> = {
    list: { path: '/pub' },
    read: { path: '/pub/a.txt' },
    mkdir: { path: '/pub/made' },
    put: { path: '/pub/up.txt', body: 'UPLOADED-1' },
    rename: { path: '/pub/a.txt', name: 'a2.txt' },
    move: { path: '/pub/a.txt', dst: '/dst' },
    copy: { path: '/pub/sub', dst: '/dst' },
    copy_file: { path: '/pub/a.txt', dst: '/dst' },
    remove: { path: '/pub/a.txt' },
    batch_rename: { path: '/pub', name: 'a.txt' },
    regex_rename: { path: '/pub', pattern: '^a\\.txt$', replacement: 'r.txt' },
    recursive_move: { path: '/pub/sub', dst: '/dst' },
    remove_empty_directory: { path: '/pub' },
    archive_list: { path: '/pub/arc.zip' },
    archive_read: { path: '/pub/arc.zip', inner: '/in.txt' },
  };
  const out: Rule['ops'] = {};
  for (const [op, t] of Object.entries(targets) as Array<[Op, Target]>) {
    const expect = what[op] ?? (Object.keys(what).length === 0 ? all : undefined);
    if (expect) out[op] = { target: t, expect };
  }
  return out;
};

const pw = (expect: Decision): Rule['ops'] => ({
  list: { target: { path: '/pw' }, expect },
  read: { target: { path: '/pw/c.txt' }, expect },
  mkdir: { target: { path: '/pw/made' }, expect },
  put: { target: { path: '/pw/up.txt', body: 'UPLOADED-2' }, expect },
  rename: { target: { path: '/pw', name: 'pw2' }, expect },
  move: { target: { path: '/pw/c.txt', dst: '/dst' }, expect },
  copy: { target: { path: '/pw', dst: '/dst' }, expect },
  copy_file: { target: { path: '/pw/c.txt', dst: '/dst' }, expect },
  remove: { target: { path: '/pw/c.txt' }, expect },
  batch_rename: { target: { path: '/pw', name: 'c.txt' }, expect },
  regex_rename: { target: { path: '/pw', pattern: '^c\\.txt$', replacement: 'd.txt' }, expect },
  recursive_move: { target: { path: '/pw', dst: '/dst' }, expect },
  remove_empty_directory: { target: { path: '/pw' }, expect },
  archive_list: { target: { path: '/pw/arc.zip' }, expect },
  archive_read: { target: { path: '/pw/arc.zip', inner: '/in.txt' }, expect },
});

const noBit = (bit: number) => (ALL_BITS & ~bit) | 0;
const ONLY_SHARE = FRONTS.filter((f) => f !== 'share');

export const RULES: Rule[] = [
  { name: 'everything allowed', perms: ALL_BITS, ops: pub({}) },
  {
    name: 'base path',
    perms: ALL_BITS,
    skip: ['d', 'p'],
    ops: {
      list: { target: { path: '/../other' }, expect: 'deny' },
      read: { target: { path: '/../other/o.txt' }, expect: 'deny' },
      mkdir: { target: { path: '/../other/made' }, expect: 'deny' },
      put: { target: { path: '/../other/up.txt', body: 'UPLOADED-3' }, expect: 'deny' },
      rename: { target: { path: '/../other/o.txt', name: 'o2.txt' }, expect: 'deny' },
      move: { target: { path: '/../other/o.txt', dst: '/dst' }, expect: 'deny' },
      copy: { target: { path: '/../other/o.txt', dst: '/dst' }, expect: 'deny' },
      copy_file: { target: { path: '/../other/o.txt', dst: '/dst' }, expect: 'deny' },
      remove: { target: { path: '/../other/o.txt' }, expect: 'deny' },
      batch_rename: { target: { path: '/../other', name: 'o.txt' }, expect: 'deny' },
      regex_rename: { target: { path: '/../other', pattern: '^o', replacement: 'x' }, expect: 'deny' },
      recursive_move: { target: { path: '/../other', dst: '/dst' }, expect: 'deny' },
      remove_empty_directory: { target: { path: '/..' }, expect: 'deny' },
    },
  },
  { name: 'no write bit', perms: noBit(BIT.WRITE), skip: ['d', 'p', 'search'], ops: pub({ mkdir: 'deny', put: 'deny' }) },
  { name: 'no rename bit', perms: noBit(BIT.RENAME), skip: ['d', 'p', 'search'], ops: pub({ rename: 'deny', batch_rename: 'deny', regex_rename: 'deny' }) },
  { name: 'no move bit', perms: noBit(BIT.MOVE), skip: ['d', 'p', 'search'], ops: pub({ move: 'deny', recursive_move: 'deny' }) },
  { name: 'no copy bit', perms: noBit(BIT.COPY), skip: ['d', 'p', 'search'], ops: pub({ copy: 'deny', copy_file: 'deny' }) },
  { name: 'no remove bit', perms: noBit(BIT.REMOVE), skip: ['d', 'p', 'search'], ops: pub({ remove: 'deny', remove_empty_directory: 'deny' }) },
  {
    name: 'no WebDAV manage / FTP write bit',
    perms: noBit(BIT.WEBDAV_MANAGE | BIT.FTP_WRITE),
    skip: ['d', 'p', 'search'],
    ops: pub({ mkdir: 'deny', put: 'deny', rename: 'deny', move: 'deny', copy: 'deny', copy_file: 'deny', remove: 'deny' }),
    // The front bits govern their own fronts only: the API and S3 need none of them.
    frontExpect: { api: 'allow', s3: 'allow' },
  },
  {
    name: 'hide',
    perms: ALL_BITS,
    ops: {
      list: { target: { path: '/hid' }, expect: 'allow' },
      read: { target: { path: '/hid/secret.txt' }, expect: 'deny' },
      mkdir: { target: { path: '/hid/secret-made' }, expect: 'deny' },
      put: { target: { path: '/hid/secret-up.txt', body: 'UPLOADED-4' }, expect: 'deny' },
      // Hide rules follow the data: a folder holding hidden entries is not renamed, moved or copied.
      rename: { target: { path: '/hid', name: 'hid2' }, expect: 'deny' },
      move: { target: { path: '/hid', dst: '/dst' }, expect: 'deny' },
      copy: { target: { path: '/hid', dst: '/dst' }, expect: 'deny' },
      copy_file: { target: { path: '/hid/secret.txt', dst: '/dst' }, expect: 'deny' },
      remove: { target: { path: '/hid/secret.txt' }, expect: 'deny' },
      batch_rename: { target: { path: '/hid', name: 'secret.txt' }, expect: 'deny' },
      regex_rename: { target: { path: '/', pattern: '^hid$', replacement: 'hid2' }, expect: 'deny' },
      recursive_move: { target: { path: '/hid', dst: '/dst' }, expect: 'deny' },
      // Allowed, but the hidden empty folder stays.
      remove_empty_directory: { target: { path: '/hid' }, expect: 'allow' },
      archive_list: { target: { path: '/hid/secret.zip' }, expect: 'deny' },
      archive_read: { target: { path: '/hid/secret.zip', inner: '/in.txt' }, expect: 'deny' },
    },
  },
  {
    name: 'see-hidden bit',
    perms: ALL_BITS | BIT.SEE_HIDES,
    seesHidden: true,
    // A share visitor never holds the bit, whoever created the share (the next rule).
    skip: ['share'],
    ops: {
      list: { target: { path: '/hid' }, expect: 'allow' },
      read: { target: { path: '/hid/secret.txt' }, expect: 'allow' },
      put: { target: { path: '/hid/secret-up.txt', body: 'UPLOADED-6' }, expect: 'allow' },
      rename: { target: { path: '/hid', name: 'hid2' }, expect: 'allow' },
      move: { target: { path: '/hid', dst: '/dst' }, expect: 'allow' },
      copy: { target: { path: '/hid', dst: '/dst' }, expect: 'allow' },
      copy_file: { target: { path: '/hid/secret.txt', dst: '/dst' }, expect: 'allow' },
      remove: { target: { path: '/hid/secret.txt' }, expect: 'allow' },
      recursive_move: { target: { path: '/hid', dst: '/dst' }, expect: 'allow' },
      remove_empty_directory: { target: { path: '/hid' }, expect: 'allow' },
      archive_list: { target: { path: '/hid/secret.zip' }, expect: 'allow' },
      archive_read: { target: { path: '/hid/secret.zip', inner: '/in.txt' }, expect: 'allow' },
    },
  },
  {
    name: 'see-hidden bit, share visitor',
    perms: ALL_BITS | BIT.SEE_HIDES,
    skip: ONLY_SHARE,
    ops: {
      list: { target: { path: '/hid' }, expect: 'allow' },
      read: { target: { path: '/hid/secret.txt' }, expect: 'deny' },
      archive_list: { target: { path: '/hid/secret.zip' }, expect: 'deny' },
      archive_read: { target: { path: '/hid/secret.zip', inner: '/in.txt' }, expect: 'deny' },
    },
  },
  // A share visitor opens a protected folder only with its password, whoever created the share.
  { name: 'access-without-password bit', perms: ALL_BITS | BIT.ACCESS_WITHOUT_PASSWORD, skip: ['share'], ops: pw('allow') },
  { name: 'access-without-password bit, share visitor', perms: ALL_BITS | BIT.ACCESS_WITHOUT_PASSWORD, skip: ONLY_SHARE, ops: pw('deny') },
  {
    name: 'no read-archives bit',
    perms: noBit(BIT.READ_ARCHIVES),
    ops: { archive_list: { target: { path: '/pub/arc.zip' }, expect: 'deny' }, archive_read: { target: { path: '/pub/arc.zip', inner: '/in.txt' }, expect: 'deny' } },
  },
  {
    name: 'share archive preview off',
    perms: ALL_BITS,
    settings: { share_archive_preview: 'false' },
    skip: ONLY_SHARE,
    ops: { archive_list: { target: { path: '/pub/arc.zip' }, expect: 'deny' }, archive_read: { target: { path: '/pub/arc.zip', inner: '/in.txt' }, expect: 'deny' } },
  },
  {
    name: 'no WebDAV read / FTP read bit',
    perms: ALL_BITS & ~(BIT.WEBDAV_READ | BIT.WEBDAV_MANAGE | BIT.FTP_READ | BIT.FTP_WRITE),
    skip: ['d', 'p', 'search'],
    loginRefused: ['sftp', 'ftp'],
    ops: pub({ list: 'deny', read: 'deny', mkdir: 'deny', put: 'deny', rename: 'deny', move: 'deny', copy: 'deny', copy_file: 'deny', remove: 'deny' }),
    // The protocol bits govern their own fronts: the API, share visitors and S3 need none of them.
    frontExpect: { api: 'allow', share: 'allow', s3: 'allow' },
  },
  { name: 'folder password, not given', perms: ALL_BITS, ops: pw('deny') },
  // SFTP and S3 have no way to present a folder password; WebDAV and FTP present it as the guest's
  // password, share visitors as `password` (a share without code) and `folder_pwd` on links.
  { name: 'folder password, given', perms: ALL_BITS, password: FOLDER_PASSWORD, skip: ['sftp', 's3'], ops: pw('allow') },
  {
    name: 'folder password on the destination, not given',
    perms: ALL_BITS,
    skip: ['d', 'p', 'search'],
    ops: {
      move: { target: { path: '/pub/a.txt', dst: '/pw' }, expect: 'deny' },
      copy: { target: { path: '/pub/sub', dst: '/pw' }, expect: 'deny' },
      copy_file: { target: { path: '/pub/a.txt', dst: '/pw' }, expect: 'deny' },
      recursive_move: { target: { path: '/pub/sub', dst: '/pw' }, expect: 'deny' },
    },
  },
  {
    name: 'folder password on the destination, given',
    perms: ALL_BITS,
    password: FOLDER_PASSWORD,
    skip: ['d', 'p', 'search', 'sftp', 's3'],
    ops: {
      move: { target: { path: '/pub/a.txt', dst: '/pw' }, expect: 'allow' },
      copy: { target: { path: '/pub/sub', dst: '/pw' }, expect: 'allow' },
      copy_file: { target: { path: '/pub/a.txt', dst: '/pw' }, expect: 'allow' },
      recursive_move: { target: { path: '/pub/sub', dst: '/pw' }, expect: 'allow' },
    },
  },
  {
    name: 'write rule',
    perms: noBit(BIT.WRITE),
    skip: ['d', 'p', 'search'],
    ops: {
      mkdir: { target: { path: '/wr/made' }, expect: 'allow' },
      put: { target: { path: '/wr/up.txt', body: 'UPLOADED-5' }, expect: 'allow' },
    },
  },
  {
    name: 'system files',
    perms: ALL_BITS,
    settings: { ignore_system_files: 'true' },
    skip: ['d', 'p', 'search'],
    ops: { put: { target: { path: '/pub/.DS_Store', body: 'SYSTEM-FILE' }, expect: 'deny' } },
  },
];

export interface Case {
  rule: Rule;
  op: Op;
  front: Front;
  target: Target;
  expect: Decision;
}

/** Every case of the matrix: rule × operation × front, where the front can do the operation. */
export function cases(): Case[] {
  const out: Case[] = [];
  for (const rule of RULES) {
    for (const [op, c] of Object.entries(rule.ops) as Array<[Op, { target: Target; expect: Decision }]>) {
      for (const front of FRONTS) {
        if (rule.skip?.includes(front) || !FRONT_OPS[front].includes(op)) continue;
        out.push({ rule, op, front, target: c.target, expect: (c.expect === 'deny' && rule.frontExpect?.[front]) || c.expect });
      }
    }
  }
  return out;
}
