// Human names for the server's wire keys: a dictionary entry when there is one, else the key
// humanised (cache_expiration → "Cache expiration", sso_client_id → "SSO client ID").
import { tx } from './i18n';

const WORDS: Record<string, string> = {
  url: 'URL', uri: 'URI', api: 'API', id: 'ID', ip: 'IP', ssl: 'SSL', tls: 'TLS', ftp: 'FTP', sftp: 'SFTP', s3: 'S3',
  ldap: 'LDAP', sso: 'SSO', oidc: 'OIDC', jwt: 'JWT', dn: 'DN', ocr: 'OCR', webdav: 'WebDAV', http: 'HTTP', https: 'HTTPS',
  pasv: 'PASV', qbittorrent: 'qBittorrent', aria2: 'aria2', txt: 'TXT', otp: 'OTP', ssh: 'SSH', '2fa': '2FA',
};

export function humanize(key: string): string {
  const words = key.split(/[_\s]+/).filter(Boolean).map((w) => WORDS[w.toLowerCase()] ?? w.toLowerCase());
  if (words.length === 0) return key;
  const first = words[0]!;
  words[0] = first === first.toLowerCase() ? first.charAt(0).toUpperCase() + first.slice(1) : first;
  return words.join(' ');
}

export const fieldLabel = (key: string) => tx(`f.${key}`) ?? humanize(key);
/** Our help text for a key, else the server's. */
export const fieldHelp = (key: string, serverHelp?: string) => tx(`h.${key}`) ?? serverHelp;
export const optionLabel = (value: string) => (value === '' ? '—' : (tx(`o.${value}`) ?? humanize(value)));
