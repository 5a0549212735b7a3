import type * as Ldapts from 'ldapts';
import type { ClientOptions } from 'ldapts';
import type { Settings } from '../settings/service.js';
import { lazyRequire } from '../util/lazy-require.js';

/** The LDAP client (about 4 MB of heap): loaded at the first LDAP login, not at start. */
const loadLdapts = lazyRequire<typeof Ldapts>('ldapts');

/** A directory whose connection settings are missing or wrong (an admin's error, not a user's). */
export class LdapConfigError extends Error {}

/** RFC 4515 escaping of a value put into a search filter. */
export function escapeFilterValue(value: string): string {
  return new (loadLdapts().EqualityFilter)({ attribute: 'x', value }).toString().slice('(x='.length, -1);
}

/**
 * Checks a user name and password against the LDAP directory of the `ldap_*` settings: binds as
 * the manager, finds the one entry the user search filter (`%s` = the escaped name) selects under
 * the search base, then binds as that entry with the password. TLS: ldaps:// URLs, or StartTLS
 * when `ldap_start_tls` is on; the certificate is checked (against `ldap_ca_cert` when set) unless
 * `ldap_skip_tls_verify` is on.
 */
export class LdapDirectory {
  constructor(private readonly settings: Settings) {}

  enabled(): boolean {
    return this.settings.getBool('ldap_login_enabled');
  }

  async verify(username: string, password: string): Promise<boolean> {
    // An empty password would be an unauthenticated bind, which directories answer with success.
    if (username === '' || password === '') return false;
    const url = this.settings.get('ldap_server').trim();
    if (!/^ldaps?:\/\//i.test(url)) throw new LdapConfigError('ldap_server must be an ldap:// or ldaps:// URL');
    const ca = this.settings.get('ldap_ca_cert').trim();
    const tlsOptions = { rejectUnauthorized: !this.settings.getBool('ldap_skip_tls_verify'), ...(ca ? { ca } : {}) };
    const secure = url.toLowerCase().startsWith('ldaps://');
    // ldapts opens TLS from the start whenever tlsOptions are given: only for ldaps:// URLs.
    const options: ClientOptions = { url, timeout: 10_000, connectTimeout: 10_000, ...(secure ? { tlsOptions } : {}) };
    const startTls = !secure && this.settings.getBool('ldap_start_tls');
    const { Client } = loadLdapts();
    const search = new Client(options);
    try {
      if (startTls) await search.startTLS(tlsOptions);
      await search.bind(this.settings.get('ldap_manager_dn'), this.settings.get('ldap_manager_password'));
      const filter = this.settings.get('ldap_user_search_filter').replaceAll('%s', escapeFilterValue(username));
      const { searchEntries } = await search.search(this.settings.get('ldap_user_search_base'), { scope: 'sub', filter, attributes: ['dn'], sizeLimit: 2 });
      if (searchEntries.length !== 1) return false;
      const user = new Client(options);
      try {
        if (startTls) await user.startTLS(tlsOptions);
        await user.bind(searchEntries[0]!.dn, password);
        return true;
      } catch (err) {
        if ((err as { code?: number }).code === 49) return false; // invalidCredentials
        throw err;
      } finally {
        await user.unbind().catch(() => undefined);
      }
    } finally {
      await search.unbind().catch(() => undefined);
    }
  }
}
