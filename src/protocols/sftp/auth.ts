import type * as Ssh2 from 'ssh2';
import type { AuthContext } from 'ssh2';
import type { Core } from '../../core.js';
import { ROLE_GUEST, type User } from '../../db/users.js';
import { mayConnect } from '../../view/view.js';
import { appPasswordCredential, type Credential, sshKeyCredential } from '../live-session.js';

/** An accepted login: the user, and the app password or key it was made with (its revocation ends the session). */
export interface SshLogin {
  user: User;
  credential?: Credential;
}

/**
 * Decides one SSH authentication attempt (wire-api.md §15.4): `none` for the guest only,
 * `password` through Accounts.checkPassword (the login lockout applies), `publickey` against the
 * keys the user registered (`last_used_time` updated on a signed match). Resolves with the
 * login once accepted; rejects the attempt (answering the methods left) otherwise.
 */
export async function authenticate(ssh2: typeof Ssh2, core: Core, ctx: AuthContext, ip: string): Promise<SshLogin | undefined> {
  const methods: Array<'password' | 'publickey'> = core.settings.get('sftp_disable_password_login') === 'true' ? ['publickey'] : ['password', 'publickey'];
  const reject = () => {
    ctx.reject(methods);
    return undefined;
  };
  switch (ctx.method) {
    case 'none': {
      const guest = await core.repos.users.byRole(ROLE_GUEST);
      if (ctx.username !== guest?.username || !mayConnect(guest) || !(await admitted(core, guest, ip))) return reject();
      ctx.accept();
      return { user: guest };
    }
    case 'password': {
      if (!methods.includes('password')) return reject();
      let user: User;
      try {
        user = await core.accounts.checkPassword(ctx.username, ctx.password, ip, { front: 'sftp', ip });
      } catch {
        return reject();
      }
      if (!mayConnect(user) || !(await admitted(core, user, ip))) return reject();
      const credential = await appPasswordCredential(core, user, ctx.password);
      ctx.accept();
      return { user, credential };
    }
    case 'publickey': {
      const user = await core.repos.users.byUsername(ctx.username);
      if (!mayConnect(user)) return reject();
      for (const stored of await core.repos.sshKeys.ofUser(user.id)) {
        const key = ssh2.utils.parseKey(stored.keyStr);
        if (key instanceof Error || Array.isArray(key)) continue;
        if (!key.getPublicSSH().equals(ctx.key.data)) continue;
        // Without a signature the client only asks whether the key would do.
        if (!ctx.signature || !ctx.blob) {
          ctx.accept();
          return undefined;
        }
        if (key.verify(ctx.blob, ctx.signature, ctx.hashAlgo) !== true || !(await admitted(core, user, ip))) return reject();
        await core.repos.sshKeys.touch(stored.id, Date.now());
        ctx.accept();
        return { user, credential: sshKeyCredential(core, user.id, stored.id) };
      }
      return reject();
    }
    default:
      return reject();
  }
}

/** Whether the account may open one more session (max_sessions); SSH has no text for a refused login, so the log says why. */
async function admitted(core: Core, user: User, ip: string): Promise<boolean> {
  try {
    await core.sessions.admit(user);
    return true;
  } catch (err) {
    core.log.warn({ user: user.username, ip, reason: (err as Error).message }, 'sftp login refused');
    return false;
  }
}
