import { Transform, type TransformCallback } from 'node:stream';
import type { Core } from '../core.js';
import type { User } from '../db/users.js';
import { AppError, Forbidden, Unauthorized } from '../errors.js';
import type { LiveView } from '../view/live.js';
import { mayConnect, MSG_DENIED, type View, type ViewOptions } from '../view/view.js';

export const MSG_NO_FTP = 'SFTP and FTP are not allowed for this user';
export const MSG_CREDENTIAL_REVOKED = 'the app password or SSH key of this session was revoked';

/** How long a credential found still there is trusted before it is looked up again (as the cached user). */
const CREDENTIAL_TTL_MS = 2000;
/** A transfer running longer than this is decided again before its next bytes pass. */
export const TRANSFER_RECHECK_MS = 1000;

/**
 * How a session signed in beyond its account password: an app password or an SSH key (by id);
 * `held()` tells whether it still exists. Undefined for the account password itself, which a
 * change of ends through the password stamp.
 */
export interface Credential {
  held(): Promise<boolean>;
}

/** The app password `plain` is of the user (a login through checkPassword), as a credential. */
export async function appPasswordCredential(core: Core, user: User, plain: string): Promise<Credential | undefined> {
  const entry = await core.accounts.appPasswords.find(user, plain);
  if (!entry) return undefined;
  return { held: async () => (await core.repos.appPasswords.byId(entry.id)) !== undefined };
}

/** An SSH key of the user (a public-key login), as a credential. */
export function sshKeyCredential(core: Core, userId: number, keyId: number): Credential {
  return { held: async () => (await core.repos.sshKeys.byId(keyId))?.userId === userId };
}

/**
 * The principal of an SFTP or FTP session, decided again at every operation: `view()` answers
 * the view of the account and rules as they are now (LiveView, from the cached user), and
 * checks that the credential the session signed in with is still there. A deleted, disabled
 * or re-passworded user, a lost FTP/SFTP read bit or a revoked credential end the session:
 * `ended` is set once, and every later call throws the same `Unauthorized`.
 */
export class SessionPrincipal {
  ended?: Unauthorized;
  private readonly live: LiveView<View>;
  private checkedUntil = 0;
  private checking?: Promise<void>;

  constructor(
    core: Core,
    user: User,
    opts: ViewOptions,
    private readonly credential?: Credential,
    /** Called at every operation (the session's last activity, GET /api/me/sessions). */
    private readonly onActive?: () => void,
  ) {
    this.live = core.views.live(user, opts, { pwdTs: true, admit: (u) => (mayConnect(u) ? undefined : MSG_NO_FTP) });
  }

  async view(): Promise<View> {
    if (this.ended) throw this.ended;
    this.onActive?.();
    try {
      const view = await this.live.now();
      await this.checkCredential();
      return view;
    } catch (err) {
      if (err instanceof Unauthorized) this.ended ??= err;
      throw this.ended ?? err;
    }
  }

  /** True once `err` is what ended the session (the front then closes it). */
  endedBy(err: unknown): boolean {
    return this.ended !== undefined && err === this.ended;
  }

  private checkCredential(): Promise<void> {
    if (!this.credential || Date.now() < this.checkedUntil) return Promise.resolve();
    this.checking ??= this.credential
      .held()
      .then((held) => {
        if (!held) throw new Unauthorized(MSG_CREDENTIAL_REVOKED);
        this.checkedUntil = Date.now() + CREDENTIAL_TTL_MS;
      })
      .finally(() => (this.checking = undefined));
    return this.checking;
  }
}

/**
 * A virtual path the session holds from an earlier operation (an open SFTP handle, FTP's RNFR)
 * is still the principal's to use: inside the current base path and readable under the current
 * rules. A path a narrowed base path left outside is refused as the area it is in.
 */
export function requireHeld(view: View, p: string): void {
  if (!view.contains(p)) throw new Forbidden(MSG_DENIED);
  view.requireRead(p);
}

/**
 * A transfer's bytes passed through a decision: `check` runs before bytes pass once the last
 * check is older than TRANSFER_RECHECK_MS, and always before the end is passed on, so an upload
 * whose principal was refused meanwhile fails before its storage commits it (the put renames
 * its temporary file only after the end), and a long download stops.
 */
export function decidedStream(check: () => Promise<void>): Transform {
  let last = Date.now();
  const run = (pass: () => void, cb: TransformCallback) => {
    check().then(
      () => {
        last = Date.now();
        pass();
        cb();
      },
      (err: unknown) => cb(err instanceof AppError || err instanceof Error ? err : new Error(String(err))),
    );
  };
  return new Transform({
    highWaterMark: 1 << 20,
    transform(chunk: Buffer, _enc, cb) {
      if (Date.now() - last < TRANSFER_RECHECK_MS) return cb(null, chunk);
      run(() => this.push(chunk), cb);
    },
    flush(cb) {
      run(() => undefined, cb);
    },
  });
}
