import { randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { z } from 'zod';
import type { EventOrigin } from '../audit/events.js';
import { isGuest } from '../auth/permissions.js';
import type { WopiFilesRepo, WopiFileRow } from '../db/wopi-files.js';
import type { Obj } from '../drivers/types.js';
import { writeUploadTo } from '../drivers/write-file.js';
import { encodePath } from '../util/encode-path.js';
import { BadRequest, Forbidden, isKind, KindError, NotFound, TooLarge, Unauthorized, Unsupported, type ErrorKind } from '../errors.js';
import type { FileLocks, Lock } from '../fs/locks.js';
import type { LinkFetcher } from '../net/link-fetch.js';
import type { Settings } from '../settings/service.js';
import type { FrontPolicy, View, Views } from '../view/view.js';
import type { Share } from '../db/shares.js';
import type { ShareView } from '../view/share.js';
import { actionBase, actionUrl, Discovery, type WopiAction } from './discovery.js';
import { type ShareGrant, type WopiGrant, type WopiMode, WopiTokens } from './tokens.js';
import { utf7Decode, utf7Encode } from './utf7.js';

/** The WOPI callbacks decide WOPI locks themselves (as WebDAV decides its tokens); a put needs what any API put needs. */
export const WOPI_FRONT: FrontPolicy = { changeBit: 0, paths: 'strict', checksLocks: true };

/** A WOPI lock lives 30 minutes unless refreshed (the WOPI spec). */
export const WOPI_LOCK_SECONDS = 30 * 60;
/** SupportsExtendedLockLength: lock ids of up to 1024 ASCII characters. */
const MAX_LOCK_ID = 1024;
const MAX_NAME_LENGTH = 255;
const INVALID_NAME_CHARS = /[\\/:*?"<>|\x00-\x1f\x7f]/;

export const MSG_WOPI_DISABLED = 'WOPI is not enabled';
export const MSG_NO_SHARE_VIEW = 'share visitors may not open documents in an online office (wopi_share_view)';

/**
 * A refusal with the status and headers the WOPI spec gives it (409 with X-WOPI-Lock, 400 with
 * X-WOPI-InvalidFileNameError, 409 with X-WOPI-ValidRelativeTarget, 412, 501), beside its kind.
 */
export class WopiRefusal extends KindError {
  constructor(
    kind: ErrorKind,
    readonly status: number,
    readonly headers: Record<string, string>,
    message: string,
  ) {
    super(kind, message);
  }
}

const lockMismatch = (current: string, reason = 'the file is locked with another lock id') =>
  new WopiRefusal('Conflict', 409, { 'X-WOPI-Lock': current, 'X-WOPI-LockFailureReason': reason }, reason);
const lockedElsewhere = () => lockMismatch('', 'the file is locked by another client (WebDAV)');
const invalidName = (why: string) => new WopiRefusal('BadRequest', 400, { 'X-WOPI-InvalidFileNameError': why }, why);

// A WOPI lock is a row of the lock table (fs/locks.ts) whose owner names its lock id, as a
// well-formed <D:owner> element, so that WebDAV's lock discovery shows it as any other lock.
const OWNER_HEAD = '<D:owner>wopi:';
const OWNER_TAIL = '</D:owner>';
const escapeXml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const unescapeXml = (s: string) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&amp;/g, '&');
const ownerOf = (lockId: string) => `${OWNER_HEAD}${escapeXml(lockId)}${OWNER_TAIL}`;
const isWopiLock = (l: Lock) => l.owner.startsWith(OWNER_HEAD) && l.owner.endsWith(OWNER_TAIL);
const lockIdOf = (l: Lock) => unescapeXml(l.owner.slice(OWNER_HEAD.length, -OWNER_TAIL.length));

const serviceShape = z.object({
  name: z.string().min(1),
  discovery_url: z.string().min(1),
  extensions: z.union([z.array(z.string()), z.string()]).optional(),
});
export interface WopiService {
  name: string;
  discoveryUrl: string;
  /** Lower case, without dots; empty: every extension the discovery lists. */
  extensions: string[];
}

/** The `wopi_services` setting: a JSON list of `{name, discovery_url, extensions}` (a list or a comma-separated text). */
export function parseServices(text: string): WopiService[] {
  let raw: unknown;
  try {
    raw = JSON.parse(text || '[]');
  } catch (err) {
    throw new BadRequest(`wopi_services is not JSON: ${(err as Error).message}`);
  }
  const parsed = z.array(serviceShape).safeParse(raw);
  if (!parsed.success) throw new BadRequest(`wopi_services must be a list of {name, discovery_url, extensions}: ${parsed.error.issues[0]?.message ?? ''}`);
  return parsed.data.map((s) => ({
    name: s.name,
    discoveryUrl: s.discovery_url,
    extensions: (typeof s.extensions === 'string' ? s.extensions.split(',') : (s.extensions ?? [])).map((e) => e.trim().replace(/^\./, '').toLowerCase()).filter(Boolean),
  }));
}

/** What the host asks of shares (shares/service.ts): a grant's share as it stands now, and a code's stamp. */
export interface WopiShares {
  revisit(sid: string, stamp: string): Promise<ShareView>;
  codeStamp(share: Share): string;
}

export interface WopiDeps {
  views: Views;
  shares: WopiShares;
  locks: FileLocks;
  settings: Settings;
  links: LinkFetcher;
  files: WopiFilesRepo;
  /** The configuration's jwt_secret: access tokens are signed with a key derived from it. */
  secret: string;
  /** Where a chunked body is received before it is stored (temp_dir). */
  tempDir: string;
  now?: () => number;
}

export interface SessionInput {
  path: string;
  edit: boolean;
  service: string;
  lang: string;
}

export interface WopiSession {
  /** The action's URL without its query, as OpenList answers it (its front end adds WOPISrc and the language). */
  action_url: string;
  /** The complete URL to open the file at: the template's parameters filled, WOPISrc added. */
  editor_url: string;
  wopi_src: string;
  access_token: string;
  /** Milliseconds since the epoch. */
  access_token_ttl: number;
  mode: WopiMode;
  service_name: string;
  action: string;
  favicon_url: string;
  /** OpenList's names of the same (its front end reads them). */
  session: { id: string; access_token: string; expires: number };
  wopi_src_url: string;
}

/** One callback's principal and file, as they are now. */
export interface Callback {
  grant: WopiGrant;
  view: View;
  file: WopiFileRow;
  /** Where the site is, for the URLs answered (WOPISrc of a new file, breadcrumbs). */
  site: string;
  /** A share visitor's callback: `view` is the share creator's, read-only, as visitors read. */
  visitor?: ShareGrant;
}

export interface Body {
  stream: Readable;
  /** Declared length, -1 when unknown. */
  size: number;
}

const versionOf = (o: Obj) => `${o.modified.getTime().toString(36)}-${o.size.toString(36)}`;
const join = (dir: string, name: string) => (dir === '/' ? `/${name}` : `${dir}/${name}`);

/**
 * The WOPI host (Microsoft's WOPI REST API, as Collabora Online and ONLYOFFICE Docs call it):
 * sessions opened by a signed-in user, and the online office's callbacks. Every callback reads
 * the user as they are now (a disabled, deleted or re-passworded user is refused) and decides on
 * their live view; locks are rows of the lock table shared with WebDAV, so a WOPI lock refuses
 * other fronts' writes and every process of a cluster answers the callbacks.
 */
export class WopiHost {
  readonly tokens: WopiTokens;
  readonly discovery: Discovery;
  private readonly views: Views;
  private readonly shares: WopiShares;
  private readonly locks: FileLocks;
  private readonly settings: Settings;
  private readonly files: WopiFilesRepo;
  private readonly tempDir: string;

  constructor(deps: WopiDeps) {
    this.tempDir = deps.tempDir;
    this.views = deps.views;
    this.shares = deps.shares;
    this.locks = deps.locks;
    this.settings = deps.settings;
    this.files = deps.files;
    this.tokens = new WopiTokens(deps.secret, deps.now);
    this.discovery = new Discovery(deps.links, deps.now);
  }

  private requireEnabled(): void {
    if (!this.settings.getBool('wopi_enabled')) throw new BadRequest(MSG_WOPI_DISABLED);
  }

  // ---- sessions ----

  /** Opens a file in an online office: the action URL for its extension, in edit mode only where the user may write it now. */
  async createSession(view: View, input: SessionInput, site: string): Promise<WopiSession> {
    this.requireEnabled();
    const p = view.virtual(input.path);
    const obj = await view.stat(p);
    if (obj.isDir) throw new BadRequest('a folder can not be opened in an online office');
    const ext = path.posix.extname(obj.name).slice(1).toLowerCase();
    if (!ext) throw new BadRequest('a file without an extension can not be opened in an online office');
    // The callbacks carry no folder password (the token would show it): a file behind one is refused here, not at the office's first call.
    if (!this.views.for(view.user, { front: WOPI_FRONT }).mayRead(p)) throw new Forbidden('a file behind a folder password can not be opened in an online office');
    const wantEdit = input.edit && view.mayPut(p);
    const { service, action } = await this.findAction(ext, input.service, wantEdit);
    const mode: WopiMode = wantEdit && action.name === 'edit' ? 'edit' : 'view';
    const file = await this.files.idFor(p, view.user.id);
    const issued = this.tokens.issue({ fileId: file.id, userId: view.user.id, pwdTs: view.user.pwdTs, mode });
    return this.answer(issued, { service, action }, site, input.lang);
  }

  /**
   * Opens a shared document for a share's visitor, read-only (wopi_share_view): the share's code
   * and the file's rules were checked by the visit; the token names the share, its code's stamp
   * and the visitor's path, and every callback opens the share again as it stands then.
   */
  async createShareSession(visit: ShareView, rel: string, input: Omit<SessionInput, 'path' | 'edit'>, site: string): Promise<WopiSession> {
    this.requireEnabled();
    if (!this.settings.getBool('wopi_share_view')) throw new Forbidden(MSG_NO_SHARE_VIEW);
    const { target, obj } = await visit.fileAt(rel);
    const ext = path.posix.extname(obj.name).slice(1).toLowerCase();
    if (!ext) throw new BadRequest('a file without an extension can not be opened in an online office');
    const stamp = this.shares.codeStamp(visit.share);
    const shared: ShareGrant = { id: visit.share.id, stamp, rel: visit.clean(rel) };
    // The callbacks carry no folder password: a file behind one is refused here, as for users.
    await (await this.shares.revisit(shared.id, stamp)).fileAt(shared.rel).catch((err: unknown) => {
      throw isKind(err, 'PasswordRequired') ? new Forbidden('a file behind a folder password can not be opened in an online office') : err;
    });
    const found = await this.findAction(ext, input.service, false);
    const file = await this.files.idFor(target, visit.creator.id);
    const issued = this.tokens.issue({ fileId: file.id, userId: visit.creator.id, pwdTs: visit.creator.pwdTs, mode: 'view', share: shared });
    return this.answer(issued, found, site, input.lang);
  }

  private answer({ token, grant }: { token: string; grant: WopiGrant }, { service, action }: { service: WopiService; action: WopiAction }, site: string, lang: string): WopiSession {
    const wopiSrc = `${site}/api/wopi/files/${grant.fileId}`;
    return {
      action_url: actionBase(action.urlsrc),
      editor_url: actionUrl(action.urlsrc, { wopiSrc, lang }),
      wopi_src: wopiSrc,
      access_token: token,
      access_token_ttl: grant.expires,
      mode: grant.mode,
      service_name: service.name,
      action: action.name,
      favicon_url: action.favIconUrl ?? '',
      session: { id: grant.fileId, access_token: token, expires: grant.expires },
      wopi_src_url: wopiSrc,
    };
  }

  /** The first service (or the one named) whose discovery opens `ext`: its edit action when editing, else a viewing one. */
  private async findAction(ext: string, name: string, edit: boolean): Promise<{ service: WopiService; action: WopiAction }> {
    const all = parseServices(this.settings.get('wopi_services'));
    const services = all.filter((s) => (!name || s.name === name) && (s.extensions.length === 0 || s.extensions.includes(ext)));
    if (name && !all.some((s) => s.name === name)) throw new BadRequest(`no WOPI service is named ${name}`);
    for (const service of services) {
      const actions = (await this.discovery.of(service.discoveryUrl)).get(ext) ?? [];
      const by = (n: string) => actions.find((a) => a.name === n);
      // Without a viewing action the edit one opens read-only (CheckFileInfo says UserCanWrite false).
      const action = (edit ? by('edit') : undefined) ?? by('view') ?? by('embedview') ?? by('edit');
      if (action) return { service, action };
    }
    throw new BadRequest(`no WOPI service opens .${ext} files`);
  }

  // ---- callbacks ----

  /**
   * The grant of a callback's token, and the principal's view as it is now: Unauthorized for a
   * bad, expired or other file's token, a user disabled, deleted or with a new password, and WOPI
   * turned off; NotFound for an unknown id or a file now outside the user's base path.
   */
  async open(fileId: string, token: string | undefined, origin: EventOrigin, site: string): Promise<Callback> {
    if (!this.settings.getBool('wopi_enabled')) throw new Unauthorized(MSG_WOPI_DISABLED);
    const grant = this.tokens.verify(token, fileId);
    const file = await this.files.byId(fileId);
    if (!file) throw new NotFound('no such file id');
    if (grant.share) return this.openShared(grant, grant.share, file, site);
    const view = await this.views.live({ id: grant.userId, pwdTs: grant.pwdTs }, { front: WOPI_FRONT, origin }, { pwdTs: true }).now();
    if (!view.contains(file.path)) throw new NotFound('no such file id');
    return { grant, view, file, site };
  }

  /** A share visitor's callback: the share as it stands now (else 401), the file still where the visitor's path leads (else 404). */
  private async openShared(grant: WopiGrant, shared: ShareGrant, file: WopiFileRow, site: string): Promise<Callback> {
    if (!this.settings.getBool('wopi_share_view')) throw new Unauthorized(MSG_NO_SHARE_VIEW);
    let visit: ShareView;
    try {
      visit = await this.shares.revisit(shared.id, shared.stamp);
    } catch (err) {
      if (isKind(err, 'NotFound')) throw new Unauthorized('the share is no longer valid');
      throw err;
    }
    const at = await visit.fileAt(shared.rel).catch((err: unknown) => {
      if (isKind(err, 'NotFound', 'PasswordRequired', 'BadRequest')) throw new NotFound('file not found');
      throw err;
    });
    if (at.target !== file.path) throw new NotFound('no such file id');
    return { grant, view: visit.readerView, file, site, visitor: shared };
  }

  /** The file as the user may read it now; a rule refusing it answers as a missing file (WOPI's 404). */
  private async readable(cb: Callback): Promise<Obj> {
    let obj: Obj;
    try {
      obj = await cb.view.stat(cb.file.path);
    } catch (err) {
      if (isKind(err, 'Forbidden', 'PasswordRequired', 'Hidden')) throw new NotFound('file not found');
      throw err;
    }
    if (obj.isDir) throw new NotFound('file not found');
    return obj;
  }

  private mayWrite(cb: Callback): boolean {
    return cb.grant.mode === 'edit' && cb.view.mayPut(cb.file.path);
  }

  /** Changes need an edit token and the user's write access as it is now. */
  private requireWrite(cb: Callback): void {
    if (!this.mayWrite(cb)) throw new Unauthorized('this access token does not allow changing the file');
  }

  async checkFileInfo(cb: Callback): Promise<Record<string, unknown>> {
    const obj = await this.readable(cb);
    const p = cb.file.path;
    const write = this.mayWrite(cb);
    const title = this.settings.get('site_title');
    const { user, folder, folderUrl } = this.whoAndWhere(cb, title);
    return {
      BaseFileName: obj.name,
      Size: obj.size,
      OwnerId: String(cb.file.ownerId),
      ...user,
      Version: versionOf(obj),
      LastModifiedTime: obj.modified.toISOString(),
      FileExtension: path.posix.extname(obj.name),
      FileNameMaxLength: MAX_NAME_LENGTH,
      UserCanWrite: write,
      ReadOnly: !write,
      UserCanRename: write && cb.view.mayRename(p),
      UserCanNotWriteRelative: !(cb.grant.mode === 'edit' && cb.view.mayPut(join(path.posix.dirname(p), '.wopi-new'))),
      SupportsLocks: true,
      SupportsGetLock: true,
      SupportsExtendedLockLength: true,
      SupportsUpdate: true,
      SupportsRename: true,
      SupportsDeleteFile: false,
      BreadcrumbBrandName: title,
      BreadcrumbBrandUrl: `${cb.site}/`,
      BreadcrumbFolderName: folder,
      BreadcrumbFolderUrl: folderUrl,
      PostMessageOrigin: new URL(cb.site).origin,
    };
  }

  /** Who reads, and the folder the breadcrumb leads back to: a share's visitor by the share's page, never the creator's paths. */
  private whoAndWhere(cb: Callback, title: string) {
    const url = (prefix: string, p: string) => `${cb.site}${prefix}${encodePath(p)}`;
    if (cb.visitor) {
      const parent = path.posix.dirname(cb.visitor.rel);
      return {
        user: { UserId: `share-${cb.visitor.id}`, UserFriendlyName: 'Guest', IsAnonymousUser: true },
        folder: parent === '/' ? title : path.posix.basename(parent),
        folderUrl: url(`/@s/${encodeURIComponent(cb.visitor.id)}`, parent),
      };
    }
    const parent = cb.view.client(path.posix.dirname(cb.file.path));
    return {
      user: { UserId: String(cb.view.user.id), UserFriendlyName: cb.view.user.username, IsAnonymousUser: isGuest(cb.view.user) },
      folder: parent === '/' ? title : path.posix.basename(parent),
      folderUrl: url('', parent),
    };
  }

  /** GetFile: the bytes (one `download` event), refused with 412 past X-WOPI-MaxExpectedSize. */
  async getFile(cb: Callback, maxExpected?: number): Promise<{ stream: Readable; size: number; version: string }> {
    const obj = await this.readable(cb);
    if (maxExpected !== undefined && obj.size > maxExpected) throw new WopiRefusal('TooLarge', 412, {}, 'the file is larger than X-WOPI-MaxExpectedSize');
    const r = await cb.view.openRead(cb.file.path);
    return { stream: r.stream, size: r.size, version: versionOf(r.obj) };
  }

  // ---- locks ----

  /** The locks on the file now: its WOPI lock, and any other (WebDAV's) that covers it. */
  private async lockState(p: string): Promise<{ wopi?: Lock; others: Lock[]; current: string }> {
    const covering = (await this.locks.current()).covering(p);
    const wopi = covering.find((l) => l.root === p && isWopiLock(l));
    return { wopi, others: covering.filter((l) => l !== wopi), current: wopi ? lockIdOf(wopi) : '' };
  }

  /** The lock id a client sent: present, at most 1024 printable ASCII characters. */
  private lockIdFrom(v: string | undefined): string {
    if (!v) throw new BadRequest('X-WOPI-Lock is required');
    if (v.length > MAX_LOCK_ID || !/^[\x20-\x7e]+$/.test(v)) throw new BadRequest('X-WOPI-Lock must be at most 1024 ASCII characters');
    return v;
  }

  /** GetLock: the current lock id, empty when the file is not locked through WOPI. */
  async getLock(cb: Callback): Promise<string> {
    await this.readable(cb);
    return (await this.lockState(cb.file.path)).current;
  }

  /**
   * Lock, and UnlockAndRelock with `oldLock`: the same id again refreshes the lock; another id,
   * or a WebDAV lock, is a 409 naming the current one. Taken atomically in the database.
   */
  async lock(cb: Callback, rawId: string | undefined, oldLock?: string): Promise<void> {
    this.requireWrite(cb);
    await this.readable(cb);
    const id = this.lockIdFrom(rawId);
    const p = cb.file.path;
    const st = await this.lockState(p);
    if (st.others.length > 0) throw lockedElsewhere();
    if (oldLock !== undefined) {
      if (!st.wopi || st.current !== oldLock) throw lockMismatch(st.current);
      if (await this.locks.update(st.wopi, { owner: ownerOf(id), timeout: WOPI_LOCK_SECONDS })) return;
      throw lockMismatch((await this.lockState(p)).current);
    }
    if (st.wopi) {
      if (st.current !== id) throw lockMismatch(st.current);
      if (await this.locks.update(st.wopi, { timeout: WOPI_LOCK_SECONDS })) return;
      throw lockMismatch((await this.lockState(p)).current);
    }
    const { conflict } = await this.locks.create(p, { depth: '0', scope: 'exclusive', owner: ownerOf(id), timeout: WOPI_LOCK_SECONDS, userId: cb.view.user.id });
    if (!conflict) return;
    if (!isWopiLock(conflict)) throw lockedElsewhere();
    // Another process took the same lock id at the same moment: that is this lock.
    if (lockIdOf(conflict) !== id) throw lockMismatch(lockIdOf(conflict));
  }

  /** RefreshLock: the holder's lock lives 30 minutes more. */
  async refreshLock(cb: Callback, rawId: string | undefined): Promise<void> {
    this.requireWrite(cb);
    await this.readable(cb);
    const id = this.lockIdFrom(rawId);
    const st = await this.lockState(cb.file.path);
    if (!st.wopi || st.current !== id) throw lockMismatch(st.current);
    if (!(await this.locks.update(st.wopi, { timeout: WOPI_LOCK_SECONDS }))) throw lockMismatch((await this.lockState(cb.file.path)).current);
  }

  /**
   * Unlock: the holder's lock is released (the lock id is the proof; a user who lost write access
   * may still let go). A view token never holds a lock, so it can not release one it read with GetLock.
   */
  async unlock(cb: Callback, rawId: string | undefined): Promise<void> {
    if (cb.grant.mode !== 'edit') throw new Unauthorized('this access token does not allow changing the file');
    await this.readable(cb);
    const id = this.lockIdFrom(rawId);
    const st = await this.lockState(cb.file.path);
    if (!st.wopi || st.current !== id) throw lockMismatch(st.current);
    await this.locks.unlock(cb.file.path, st.wopi.token);
  }

  // ---- changes ----

  /**
   * Stores a body at `p` through the view (its rules, events and hooks; the writer's temporary
   * file renamed into place), bounded by wopi_max_file_size: a declared length past it is refused
   * at once (and the writer holds a body to its declared length); a chunked body is received
   * into temp_dir up to the bound, then stored as a finished file, so that no partial file is kept.
   */
  private async store(view: View, p: string, name: string, body: Body, overwrite: boolean): Promise<void> {
    const max = this.settings.getNumber('wopi_max_file_size');
    const refusal = () => new TooLarge(`the file is larger than wopi_max_file_size (${max} bytes)`);
    if (max > 0 && body.size > max) throw refusal();
    if (max <= 0 || body.size >= 0) return view.put(p, { name, size: body.size, stream: body.stream }, overwrite);
    view.checkPut(p);
    async function* upTo(src: Readable): AsyncGenerator<Buffer> {
      let seen = 0;
      for await (const chunk of src) {
        seen += (chunk as Buffer).length;
        if (seen > max) throw refusal();
        yield chunk as Buffer;
      }
    }
    await mkdir(this.tempDir, { recursive: true });
    const temp = path.join(this.tempDir, `wopi-${randomBytes(12).toString('hex')}`);
    try {
      const size = await writeUploadTo(temp, { name, size: -1, stream: Readable.from(upTo(body.stream), { objectMode: false }) });
      await view.putFile(p, { path: temp, size }, overwrite);
    } finally {
      await rm(temp, { force: true });
    }
  }

  /**
   * PutFile: the holder of the file's WOPI lock replaces its bytes (an unlocked file only while
   * it is empty), through the view's put (rules, audit, hooks; a temporary file renamed into place).
   */
  async putFile(cb: Callback, rawId: string | undefined, body: Body): Promise<{ version: string; modified: string }> {
    this.requireWrite(cb);
    const p = cb.file.path;
    const obj = await this.readable(cb);
    const st = await this.lockState(p);
    if (st.others.length > 0) throw lockedElsewhere();
    if (st.wopi ? rawId !== st.current : obj.size !== 0) throw lockMismatch(st.current, st.wopi ? 'the file is locked with another lock id' : 'the file is not locked');
    await this.store(cb.view, p, obj.name, body, true);
    const now = await cb.view.stat(p);
    return { version: versionOf(now), modified: now.modified.toISOString() };
  }

  /** A name in folder `dir` that nothing holds: `name`, else `stem (n).ext`. */
  private async freeName(view: View, dir: string, name: string, except?: string): Promise<string> {
    const ext = path.posix.extname(name);
    const stem = ext ? name.slice(0, -ext.length) : name;
    for (let n = 0; n < 1000; n++) {
      const candidate = n === 0 ? name : `${stem} (${n})${ext}`;
      const p = join(dir, candidate);
      if (p === except || (!(await view.find(p)) && (await this.locks.current()).covering(p).length === 0)) return candidate;
    }
    throw new KindError('Exists', `no free name like ${name} in this folder`);
  }

  /**
   * PutRelativeFile: a new file in the same folder. Suggested mode (X-WOPI-SuggestedTarget, an
   * extension or a name) makes the name legal and free; relative mode (X-WOPI-RelativeTarget)
   * takes it exactly, replacing a file only with X-WOPI-OverwriteRelativeTarget and never a locked one.
   */
  async putRelative(cb: Callback, h: { suggested?: string; relative?: string; overwrite: boolean }, body: Body): Promise<{ Name: string; Url: string }> {
    if (h.suggested !== undefined && h.relative !== undefined) throw new WopiRefusal('Unsupported', 501, {}, 'X-WOPI-SuggestedTarget and X-WOPI-RelativeTarget are exclusive');
    if (h.suggested === undefined && h.relative === undefined) throw new BadRequest('X-WOPI-SuggestedTarget or X-WOPI-RelativeTarget is required');
    this.requireWrite(cb);
    const source = await this.readable(cb);
    const dir = path.posix.dirname(cb.file.path);
    let name: string;
    let replace = false;
    if (h.suggested !== undefined) {
      const wanted = utf7Decode(h.suggested).trim();
      const full = wanted.startsWith('.') ? `${path.posix.basename(source.name, path.posix.extname(source.name))}${wanted}` : wanted;
      const legal = full.replace(new RegExp(INVALID_NAME_CHARS.source, 'g'), '_').slice(-MAX_NAME_LENGTH);
      name = await this.freeName(cb.view, dir, legal === '' || legal === '.' || legal === '..' || legal.startsWith('.') ? `Untitled${legal.startsWith('.') ? legal : ''}` : legal);
    } else {
      name = utf7Decode(h.relative!);
      this.checkName(name);
      const target = join(dir, name);
      const existing = await cb.view.find(target);
      if (existing) {
        if (!h.overwrite || existing.isDir) {
          throw new WopiRefusal('Exists', 409, { 'X-WOPI-ValidRelativeTarget': utf7Encode(await this.freeName(cb.view, dir, name)) }, 'a file of this name exists');
        }
        const st = await this.lockState(target);
        if (st.wopi || st.others.length > 0) throw lockMismatch(st.current, 'the file to replace is locked');
        replace = true;
      }
    }
    const target = join(dir, name);
    await this.store(cb.view, target, name, body, replace);
    const file = await this.files.idFor(target, cb.view.user.id);
    const { token } = this.tokens.issue({ fileId: file.id, userId: cb.view.user.id, pwdTs: cb.view.user.pwdTs, mode: 'edit' });
    return { Name: name, Url: `${cb.site}/api/wopi/files/${file.id}?access_token=${encodeURIComponent(token)}` };
  }

  private checkName(name: string): void {
    if (name.trim() === '' || name === '.' || name === '..') throw invalidName('the name is empty');
    if (INVALID_NAME_CHARS.test(name)) throw invalidName('the name holds a character not allowed in file names');
    if (name.length > MAX_NAME_LENGTH) throw invalidName(`the name is longer than ${MAX_NAME_LENGTH} characters`);
  }

  /**
   * RenameFile: X-WOPI-RequestedName is the new name without its extension (the file keeps its
   * own); a name taken is made free. The file keeps its id, and its WOPI lock follows it.
   */
  async renameFile(cb: Callback, rawLock: string | undefined, requested: string | undefined): Promise<{ Name: string }> {
    this.requireWrite(cb);
    const p = cb.file.path;
    if (!cb.view.mayRename(p)) throw new Unauthorized('the user may not rename this file');
    const obj = await this.readable(cb);
    const stem = utf7Decode(requested ?? '');
    const ext = path.posix.extname(obj.name);
    this.checkName(stem);
    if (stem.length + ext.length > MAX_NAME_LENGTH) throw invalidName(`the name is longer than ${MAX_NAME_LENGTH} characters`);
    const st = await this.lockState(p);
    if (st.others.length > 0) throw lockedElsewhere();
    if (st.wopi && rawLock !== st.current) throw lockMismatch(st.current);
    const dir = path.posix.dirname(p);
    const name = await this.freeName(cb.view, dir, `${stem}${ext}`, p);
    const to = join(dir, name);
    if (to !== p) {
      await cb.view.rename(p, name);
      await this.files.move(cb.file.id, to);
      if (st.wopi) await this.locks.update(st.wopi, { root: to });
    }
    return { Name: ext ? name.slice(0, -ext.length) : name };
  }

  /** Overrides this host does not implement (DELETE, GET_SHARE_URL, PUT_USER_INFO, …). */
  unsupported(override: string): never {
    throw new Unsupported(`X-WOPI-Override ${override || '(none)'} is not supported`);
  }
}
