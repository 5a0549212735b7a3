/** Bytes that live outside what the attacker may reach; no answer may ever contain them. */
export const SECRETS = ['TOP-SECRET-OUTSIDE-7f3a', 'OTHER-USERS-PRIVATE-91c2'];

/**
 * Path strings that try to leave a base path or a storage root: dot segments in every spelling
 * (plain, percent-encoded once and twice, overlong UTF-8, backslashes, unicode look-alikes),
 * absolute paths, NUL bytes and symlinks that point outside.
 */
export const PATH_ATTACKS = [
  '..',
  '../other',
  '../other/private.txt',
  '../../outside',
  '../../outside/secret.txt',
  '../../../../../../etc',
  '/../other',
  '/../../outside/secret.txt',
  'sub/../../other',
  './../other',
  '..\\other',
  '..\\..\\outside\\secret.txt',
  '\\..\\other',
  '..%2fother',
  '%2e%2e/other',
  '%2e%2e%2fother',
  '%252e%252e/other',
  '%c0%ae%c0%ae/other',
  '..%00/other',
  'sub\u0000/../../other',
  '\u2024\u2024/other',
  '\uff0e\uff0e/other',
  '\u002e\u002e/other',
  '.../other',
  '//other',
  '/etc/passwd',
  'file:///etc/passwd',
  'link-out',
  'link-out/secret.txt',
  'rel-link/secret.txt',
  'secret-link.txt',
  '/s/other',
  '/s/../other',
];

/** Single names (rename targets, batch names) that try to become paths. */
export const NAME_ATTACKS = ['..', '.', '../escaped', '../../outside/x', 'a/b', 'a\\..\\..\\b', '..\\escaped', 'x\u0000y', '/abs', ''];
