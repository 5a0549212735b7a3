// Export and import of an installation's configuration (`atrium export FILE` / `import FILE`):
// settings, users (with their password hashes and 2FA secrets), groups, storages, metas, SSH keys and passkeys.
// The top-level keys `encrypted`, `settings`, `users`, `storages` and `metas` are those of the
// OpenList manage page's backup file, in the wire's shapes, so one format serves both; Atrium's
// own additions are `atrium` (version), the users' secrets, roots and group names, the metas' `group` (a group's name), `groups`, `ssh_keys`, `shares` and `passkeys`
// (public keys: they keep working where the new installation has the same site address).

import { z } from 'zod';
import { userJson } from '../auth/accounts.js';
import { credentialHash } from '../auth/passkeys.js';
import type { Core } from '../core.js';
import { ROLE_ADMIN, ROLE_GENERAL, ROLE_GUEST, type User } from '../db/users.js';
import type { Meta } from '../db/metas.js';
import { type Group, NO_LIMITS } from '../db/groups.js';
import { checkedLimits, limitsJson } from '../auth/limits.js';
import { checkRoots, checkTree } from '../auth/roots.js';
import { BadRequest } from '../errors.js';
import { isoTime } from '../fs/objects.js';
import { storageBody } from '../server/routes/admin-storages.js';
import { parseInput } from '../server/validation.js';
import { FLAG } from '../settings/defaults.js';
import { VERSION } from '../version.js';

export const BACKUP_FORMAT = 1;

/** Settings that describe state a backup does not hold (the search index's progress). */
const STATE_SETTINGS = new Set(['index_progress']);

const userEntry = z.object({
  username: z.string().min(1),
  base_path: z.string().default('/'),
  role: z.number().int().default(ROLE_GENERAL),
  disabled: z.boolean().default(false),
  permission: z.number().int().default(0),
  sso_id: z.string().default(''),
  allow_ldap: z.boolean().default(true),
  // Atrium's additions; an OpenList backup has none, and such users cannot be restored.
  pwd_hash: z.string().optional(),
  salt: z.string().default(''),
  pwd_ts: z.number().default(0),
  otp_secret: z.string().default(''),
  authn: z.string().default('[]'),
  // groups (issue #41): the user's own roots, and their groups by name (ids differ between installations)
  roots: z.array(z.object({ path: z.string(), name: z.string() })).max(64).optional(),
  groups: z.array(z.string()).max(1000).optional(),
  quota_bytes: z.number().int().min(0).optional(),
  quota_files: z.number().int().min(0).optional(),
  upload_rate: z.number().int().min(0).optional(),
  download_rate: z.number().int().min(0).optional(),
  max_transfers: z.number().int().min(0).optional(),
  max_sessions: z.number().int().min(0).optional(),
});

const groupEntry = z.object({
  name: z.string().min(1),
  permission: z.number().int().default(0),
  roots: z.array(z.object({ path: z.string(), name: z.string() })).max(64).default([]),
  quota_bytes: z.number().int().min(0).default(0),
  quota_files: z.number().int().min(0).default(0),
  upload_rate: z.number().int().min(0).optional(),
  download_rate: z.number().int().min(0).optional(),
  max_transfers: z.number().int().min(0).optional(),
  max_sessions: z.number().int().min(0).optional(),
});

const metaEntry = z.object({
  path: z.string().min(1),
  password: z.string().default(''),
  p_sub: z.boolean().default(false),
  write: z.boolean().default(false),
  w_sub: z.boolean().default(false),
  hide: z.string().default(''),
  h_sub: z.boolean().default(false),
  readme: z.string().default(''),
  r_sub: z.boolean().default(false),
  header: z.string().default(''),
  header_sub: z.boolean().default(false),
  /** The name of the group whose members the rule is for (Atrium's; left out: everyone, as OpenList's rules). */
  group: z.string().min(1).optional(),
});

const sshKeyEntry = z.object({
  username: z.string(),
  title: z.string(),
  fingerprint: z.string(),
  key_str: z.string(),
  added_time: z.number().default(0),
  last_used_time: z.number().default(0),
});

const shareEntry = z.object({
  id: z.string().min(1),
  creator: z.string(),
  files: z.array(z.string()).min(1),
  expires: z.number().default(0),
  pwd: z.string().default(''),
  accessed: z.number().int().default(0),
  max_accessed: z.number().int().default(0),
  disabled: z.boolean().default(false),
  remark: z.string().default(''),
  readme: z.string().default(''),
  header: z.string().default(''),
  created_at: z.number().default(0),
});

const passkeyEntry = z.object({
  username: z.string(),
  credential_id: z.string().min(1),
  public_key: z.string().min(1),
  sign_count: z.number().int().default(0),
  transports: z.array(z.string()).default([]),
  aaguid: z.string().default(''),
  backed_up: z.boolean().default(false),
  name: z.string().default('Passkey'),
  creator_ip: z.string().default(''),
  creator_ua: z.string().default(''),
  added_time: z.number().default(0),
  last_used_time: z.number().default(0),
});

/** What an import accepts (storages are checked entry by entry with the API's storage body). */
export const backupFile = z.object({
  encrypted: z.string().default(''),
  settings: z.array(z.object({ key: z.string(), value: z.string() })).default([]),
  users: z.array(userEntry).default([]),
  groups: z.array(groupEntry).default([]),
  storages: z.array(z.record(z.string(), z.unknown())).default([]),
  metas: z.array(metaEntry).default([]),
  ssh_keys: z.array(sshKeyEntry).default([]),
  shares: z.array(shareEntry).default([]),
  passkeys: z.array(passkeyEntry).default([]),
});

export type BackupFile = z.input<typeof backupFile>;

export async function exportInstallation(core: Core): Promise<Record<string, unknown>> {
  const { users } = await core.repos.users.list(1, 0);
  const groups = await core.groups.list();
  const names = new Map(users.map((u) => [u.id, u.username]));
  const sshKeys = [];
  const passkeys = [];
  for (const u of users) {
    for (const c of await core.repos.webauthn.ofUser(u.id)) {
      passkeys.push({
        username: u.username,
        credential_id: c.credentialId,
        public_key: c.publicKey,
        sign_count: c.signCount,
        transports: c.transports,
        aaguid: c.aaguid,
        backed_up: c.backedUp,
        name: c.name,
        creator_ip: c.creatorIp,
        creator_ua: c.creatorUa,
        added_time: c.addedTime,
        last_used_time: c.lastUsedTime,
      });
    }
    const keys = await core.repos.sshKeys.ofUser(u.id);
    for (const k of keys) {
      sshKeys.push({ username: names.get(k.userId)!, title: k.title, fingerprint: k.fingerprint, key_str: k.keyStr, added_time: k.addedTime, last_used_time: k.lastUsedTime });
    }
  }
  return {
    encrypted: '',
    atrium: { version: VERSION.atrium, format: BACKUP_FORMAT, exported_at: new Date().toISOString() },
    settings: core.settings.list().filter((s) => s.flag !== FLAG.DEPRECATED && !STATE_SETTINGS.has(s.key)),
    users: users.map((u) => ({
      ...userJson(u),
      pwd_hash: u.pwdHash,
      salt: u.salt,
      pwd_ts: u.pwdTs,
      otp_secret: u.otpSecret,
      authn: u.authn,
      groups: (u.groups ?? []).map((g) => g.name),
    })),
    groups: groups.map((g) => ({ name: g.name, permission: g.permission, roots: g.roots, quota_bytes: g.quotaBytes, quota_files: g.quotaFiles, ...limitsJson(g.limits) })),
    storages: (await core.repos.storages.all()).map((s) => ({ ...s, modified: isoTime(s.modified) })),
    metas: metasOut(await core.repos.metas.all(), groups),
    ssh_keys: sshKeys,
    shares: (await core.repos.shares.list(1, 0)).shares
      .filter((sh) => names.has(sh.creatorId))
      .map((sh) => ({
        id: sh.id,
        creator: names.get(sh.creatorId)!,
        files: sh.files,
        expires: sh.expires,
        pwd: sh.pwd,
        accessed: sh.accessed,
        max_accessed: sh.maxAccessed,
        disabled: sh.disabled,
        remark: sh.remark,
        readme: sh.readme,
        header: sh.header,
        created_at: sh.createdAt,
      })),
    passkeys,
  };
}

export interface ImportReport {
  settings: number;
  users: { added: number; updated: number; skipped: string[] };
  groups: { added: number; updated: number };
  storages: { added: number; updated: number };
  metas: { added: number; updated: number };
  sshKeys: { added: number; skipped: number };
  shares: { added: number; updated: number; skipped: number };
  passkeys: { added: number; skipped: number };
  unknownSettings: string[];
}

/**
 * Restores a backup into this installation: entries are matched by their natural key (setting
 * key, user name — the admin and guest by role —, mount path, meta path, user + key title) and
 * updated, or added. Everything is checked before anything is written.
 */
const BACKUP_SECTIONS = ['settings', 'users', 'groups', 'storages', 'metas', 'ssh_keys', 'shares', 'passkeys'] as const;

/** A backup file's contents, or a clear refusal: a JSON object with none of a backup's sections is not one. */
export function parseBackup(raw: unknown): z.output<typeof backupFile> {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw) || !BACKUP_SECTIONS.some((k) => k in raw)) {
    throw new BadRequest(`not a backup file: it has none of ${BACKUP_SECTIONS.join(', ')}`);
  }
  const parsed = backupFile.safeParse(raw);
  if (!parsed.success) {
    const i = parsed.error.issues[0]!;
    throw new BadRequest(`not a backup file: ${i.path.join('.') || 'top level'}: ${i.message}`);
  }
  return parsed.data;
}

type ParsedBackup = ReturnType<typeof parseBackup>;
type StorageInput = ReturnType<typeof parseStorage>;

/** A storage of the file as the storage form takes it (its id dropped); `i` names it in the error. */
function parseStorage(s: ParsedBackup['storages'][number], i: number) {
  try {
    return parseInput(storageBody, { ...s, id: undefined });
  } catch (err) {
    throw new BadRequest(`storages[${i}] (${String(s.mount_path)}): ${(err as Error).message}`);
  }
}

export async function importInstallation(core: Core, raw: unknown): Promise<ImportReport> {
  const file = parseBackup(raw);
  if (file.encrypted) throw new BadRequest('the backup is encrypted: export it again from OpenList without a password');
  const storages = file.storages.map(parseStorage);
  checkTrees(file);
  await checkMetaGroups(core, file);

  const report: ImportReport = {
    settings: 0,
    users: { added: 0, updated: 0, skipped: [] },
    groups: { added: 0, updated: 0 },
    storages: { added: 0, updated: 0 },
    metas: { added: 0, updated: 0 },
    sshKeys: { added: 0, skipped: 0 },
    shares: { added: 0, updated: 0, skipped: 0 },
    passkeys: { added: 0, skipped: 0 },
    unknownSettings: [],
  };

  await importSettings(core, file, report);
  await importGroups(core, file, report);
  await importUsers(core, file, report);
  await importStorages(core, storages, report);
  await importMetas(core, file, report);
  await importSshKeys(core, file, report);
  await importShares(core, file, report);
  await importPasskeys(core, file, report);
  return report;
}

/** Settings known here whose value changed (read-only, deprecated and state settings are left alone). */
async function importSettings(core: Core, file: ParsedBackup, report: ImportReport): Promise<void> {
  const known = new Map(core.settings.list().map((s) => [s.key, s]));
  const settings = file.settings.filter((s) => {
    const item = known.get(s.key);
    if (!item) report.unknownSettings.push(s.key);
    // Only changed values are saved (and checked): a stored value is taken as it is.
    return item !== undefined && item.value !== s.value && item.flag !== FLAG.READONLY && item.flag !== FLAG.DEPRECATED && !STATE_SETTINGS.has(s.key);
  });
  await core.settings.saveMany(settings);
  report.settings = settings.length;
}

/** Users by name (the admin and the guest by role); a new one needs its password hash and the general role. */
async function importUsers(core: Core, file: ParsedBackup, report: ImportReport): Promise<void> {
  for (const u of file.users) {
    const existing = u.role === ROLE_ADMIN || u.role === ROLE_GUEST ? await core.repos.users.byRole(u.role) : await core.repos.users.byUsername(u.username);
    const fields = {
      username: u.username,
      basePath: u.base_path,
      role: u.role,
      permission: u.permission,
      disabled: u.role === ROLE_ADMIN ? false : u.disabled,
      ssoId: u.sso_id,
      allowLdap: u.allow_ldap,
      ...(u.quota_bytes === undefined ? {} : { quotaBytes: u.quota_bytes }),
      ...(u.quota_files === undefined ? {} : { quotaFiles: u.quota_files }),
      limits: checkedLimits(u, existing?.limits),
    };
    if (existing) {
      const next: User = { ...existing, ...fields };
      if (u.pwd_hash !== undefined) Object.assign(next, { pwdHash: u.pwd_hash, salt: u.salt, pwdTs: u.pwd_ts, otpSecret: u.otp_secret, authn: u.authn });
      await core.repos.users.update({ ...next, roots: u.roots ?? existing.roots });
      if (u.groups !== undefined) await core.repos.users.setGroups(existing.id, await groupIds(core, u.groups));
      report.users.updated++;
    } else if (u.pwd_hash === undefined || u.role !== ROLE_GENERAL) {
      report.users.skipped.push(u.username);
    } else {
      const id = await core.repos.users.create({ ...fields, pwdHash: u.pwd_hash, salt: u.salt, pwdTs: u.pwd_ts, otpSecret: u.otp_secret, otpLastStep: 0, authn: u.authn, roots: u.roots ?? [] });
      if (u.groups !== undefined) await core.repos.users.setGroups(id, await groupIds(core, u.groups));
      report.users.added++;
    }
  }
}

/**
 * Refuses, before anything is written, roots that do not hold: a group's or a user's (names, one
 * name twice), a user's group naming no group of the file, and a name twice in a user's tree.
 */
function checkTrees(file: ParsedBackup): void {
  const groups = new Map<string, Group>();
  file.groups.forEach((g, i) => {
    try {
      groups.set(g.name, { id: -1 - i, name: g.name, permission: g.permission, roots: checkRoots(g.roots), quotaBytes: g.quota_bytes, quotaFiles: g.quota_files, limits: NO_LIMITS });
    } catch (err) {
      throw new BadRequest(`groups[${i}] (${g.name}): ${(err as Error).message}`);
    }
  });
  file.users.forEach((u, i) => {
    try {
      const mine = (u.groups ?? []).map((n) => groups.get(n) ?? { id: 0, name: n, permission: 0, roots: [], quotaBytes: 0, quotaFiles: 0, limits: NO_LIMITS });
      checkTree(u.username, { roots: checkRoots(u.roots ?? []), groups: mine });
    } catch (err) {
      throw new BadRequest(`users[${i}] (${u.username}): ${(err as Error).message}`);
    }
  });
}

/** Groups by name. */
async function importGroups(core: Core, file: ParsedBackup, report: ImportReport): Promise<void> {
  for (const g of file.groups) {
    const existing = await core.repos.groups.byName(g.name);
    const fields = { name: g.name, permission: g.permission, roots: checkRoots(g.roots), quotaBytes: g.quota_bytes, quotaFiles: g.quota_files, limits: checkedLimits(g, existing?.limits) };
    if (existing) {
      await core.repos.groups.update({ ...existing, ...fields });
      report.groups.updated++;
    } else {
      await core.repos.groups.create(fields);
      report.groups.added++;
    }
  }
}

/** The ids of groups by name (those of the file were imported first; a name of no group here is left out). */
async function groupIds(core: Core, names: string[]): Promise<number[]> {
  const byName = new Map((await core.repos.groups.list()).map((g) => [g.name, g.id]));
  return names.flatMap((n) => byName.get(n) ?? []);
}

/** Storages by mount path. */
async function importStorages(core: Core, storages: StorageInput[], report: ImportReport): Promise<void> {
  for (const s of storages) {
    const existing = await core.repos.storages.byMountPath(s.mount_path);
    const row = { ...s, status: '', modified: Date.now() };
    delete (row as { id?: number }).id;
    if (existing) {
      await core.repos.storages.update({ ...row, id: existing.id });
      report.storages.updated++;
    } else {
      await core.repos.storages.create(row);
      report.storages.added++;
    }
  }
}

/** The path rules as a backup holds them: a group's rule names its group (ids differ between installations), everyone's names none. */
function metasOut(metas: Meta[], groups: Group[]): Array<Omit<Meta, 'group_id'> & { group?: string }> {
  const names = new Map(groups.map((g) => [g.id, g.name]));
  return metas.flatMap(({ group_id, ...m }) => {
    if (group_id === 0) return [m];
    const group = names.get(group_id);
    return group === undefined ? [] : [{ ...m, group }];
  });
}

/** Refuses, before anything is written, a rule naming a group neither the file nor this installation has. */
async function checkMetaGroups(core: Core, file: ParsedBackup): Promise<void> {
  const inFile = new Set(file.groups.map((g) => g.name));
  for (const [i, m] of file.metas.entries()) {
    if (m.group !== undefined && !inFile.has(m.group) && !(await core.repos.groups.byName(m.group))) {
      throw new BadRequest(`metas[${i}] (${m.path}): no group ${m.group}`);
    }
  }
}

/** Path rules by path and group (the group by name, imported before them). */
async function importMetas(core: Core, file: ParsedBackup, report: ImportReport): Promise<void> {
  for (const { group, ...m } of file.metas) {
    const groupId = group === undefined ? 0 : (await core.repos.groups.byName(group))!.id;
    const existing = await core.repos.metas.byPath(m.path, groupId);
    if (existing) {
      await core.repos.metas.update({ ...m, group_id: groupId, id: existing.id });
      report.metas.updated++;
    } else {
      await core.repos.metas.create({ ...m, group_id: groupId });
      report.metas.added++;
    }
  }
  await core.metas.reload();
}

/** SSH keys of users here, by title. */
async function importSshKeys(core: Core, file: ParsedBackup, report: ImportReport): Promise<void> {
  for (const k of file.ssh_keys) {
    const user = await core.repos.users.byUsername(k.username);
    if (!user || (await core.repos.sshKeys.byName(user.id, k.title))) {
      report.sshKeys.skipped++;
      continue;
    }
    await core.repos.sshKeys.create({ userId: user.id, title: k.title, fingerprint: k.fingerprint, keyStr: k.key_str, addedTime: k.added_time, lastUsedTime: k.last_used_time });
    report.sshKeys.added++;
  }
}

/** Shares under their ids. */
async function importShares(core: Core, file: ParsedBackup, report: ImportReport): Promise<void> {
  // A share is kept under its id (its links stay valid); one whose creator is not here is skipped.
  for (const sh of file.shares) {
    const creator = await core.repos.users.byUsername(sh.creator);
    if (!creator) {
      report.shares.skipped++;
      continue;
    }
    const row = {
      id: sh.id,
      files: sh.files,
      expires: sh.expires,
      pwd: sh.pwd,
      accessed: sh.accessed,
      maxAccessed: sh.max_accessed,
      creatorId: creator.id,
      disabled: sh.disabled,
      remark: sh.remark,
      readme: sh.readme,
      header: sh.header,
      createdAt: sh.created_at || Date.now(),
    };
    if (await core.repos.shares.byId(sh.id)) {
      await core.repos.shares.update(row);
      report.shares.updated++;
    } else {
      await core.repos.shares.create(row);
      report.shares.added++;
    }
  }
}

/** Passkeys by credential id. */
async function importPasskeys(core: Core, file: ParsedBackup, report: ImportReport): Promise<void> {
  // A passkey already here (by its credential id) or whose user is not here is skipped.
  for (const c of file.passkeys) {
    const user = await core.repos.users.byUsername(c.username);
    const hash = credentialHash(c.credential_id);
    if (!user || (await core.repos.webauthn.byHash(hash))) {
      report.passkeys.skipped++;
      continue;
    }
    await core.repos.webauthn.create({
      userId: user.id,
      credentialHash: hash,
      credentialId: c.credential_id,
      publicKey: c.public_key,
      signCount: c.sign_count,
      transports: c.transports,
      aaguid: c.aaguid,
      backedUp: c.backed_up,
      name: c.name,
      creatorIp: c.creator_ip,
      creatorUa: c.creator_ua,
      addedTime: c.added_time,
      lastUsedTime: c.last_used_time,
    });
    report.passkeys.added++;
  }
}
