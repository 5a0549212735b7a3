import type * as Ssh2 from 'ssh2';
import type { AuthContext } from 'ssh2';
import type { Core } from '../../core.js';
import { ROLE_GUEST, type User } from '../../db/users.js';
import { mayConnect } from '../../view/view.js';

/**
 * Decides one SSH authentication attempt (wire-api.md §15.4): `none` for the guest only,
 * `password` through Accounts.checkPassword (the login lockout applies), `publickey` against the
 * keys the user registered (`last_used_time` updated on a signed match). Resolves with the
 * user once accepted; rejects the attempt (answering the methods left) otherwise.
 */
export async function authenticate(ssh2: typeof Ssh2, core: Core, ctx: AuthContext, ip: string): Promise<User | undefined> {
  const methods: Array<'password' | 'publickey'> = core.settings.get('sftp_disable_password_login') === 'true' ? ['publickey'] : ['password', 'publickey'];
  const reject = () => {
    ctx.reject(methods);
    return undefined;
  };
  switch (ctx.method) {
    case 'none': {
      const guest = await core.repos.users.byRole(ROLE_GUEST);
      if (ctx.username !== guest?.username || !mayConnect(guest)) return reject();
      ctx.accept();
      return guest;
    }
    case 'password': {
      if (!methods.includes('password')) return reject();
      let user: User;
      try {
        user = await core.accounts.checkPassword(ctx.username, ctx.password, ip);
      } catch {
        return reject();
      }
      if (!mayConnect(user)) return reject();
      ctx.accept();
      return user;
    }
    case 'publickey': {
      const user = await core.repos.users.byUsername(ctx.username);
      if (!mayConnect(user)) return reject();
      const { keys } = await core.repos.sshKeys.ofUser(user.id, 1, 0);
      for (const stored of keys) {
        const key = ssh2.utils.parseKey(stored.keyStr);
        if (key instanceof Error || Array.isArray(key)) continue;
        if (!key.getPublicSSH().equals(ctx.key.data)) continue;
        // Without a signature the client only asks whether the key would do.
        if (!ctx.signature || !ctx.blob) {
          ctx.accept();
          return undefined;
        }
        if (key.verify(ctx.blob, ctx.signature, ctx.hashAlgo) !== true) return reject();
        await core.repos.sshKeys.touch(stored.id, Date.now());
        ctx.accept();
        return user;
      }
      return reject();
    }
    default:
      return reject();
  }
}
