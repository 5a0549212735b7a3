import { ROLE_GENERAL, type NewUser } from '../db/users.js';
import type { Settings } from '../settings/service.js';
import { cleanPath } from '../util/paths.js';
import { randomAlnum } from '../util/random.js';
import { hashPassword } from './password.js';

/**
 * A user created at the first sign-in through a directory (`ldap`) or a provider (`sso`): a general
 * user with the base path and permission of the `<source>_default_dir` / `<source>_default_permission`
 * settings, and a random local password that nobody knows (the directory or the provider signs
 * this user in).
 */
export function provisionedUser(settings: Settings, source: 'ldap' | 'sso', username: string, fields: { ssoId: string; allowLdap: boolean }): NewUser {
  const permission = Number.parseInt(settings.get(`${source}_default_permission`), 10);
  return {
    username,
    ...hashPassword(randomAlnum(32)),
    basePath: cleanPath(settings.get(`${source}_default_dir`) || '/'),
    role: ROLE_GENERAL,
    permission: Number.isFinite(permission) ? permission : 0,
    otpSecret: '',
    otpLastStep: 0,
    disabled: false,
    authn: '[]',
    ...fields,
  };
}
