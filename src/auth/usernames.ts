import { BadRequest } from '../errors.js';

/** Characters that draw nothing: control, format (zero-width space, joiners, bidi marks) and default-ignorable ones. */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}]/gu;

/**
 * What a user name looks like to a person: invisible characters dropped, compatibility forms
 * folded (NFKC: fullwidth `ａｄｍｉｎ` is `admin`), case folded. Two names with the same key are
 * look-alikes, and only one of them may exist.
 */
export function usernameKey(name: string): string {
  return name.replace(INVISIBLE, '').normalize('NFKC').toLowerCase().normalize('NFKC');
}

/** A new or changed name: no invisible characters, and something left once they are gone. */
export function checkUsername(name: string): void {
  if (INVISIBLE.test(name)) {
    INVISIBLE.lastIndex = 0;
    throw new BadRequest('username must not contain invisible or control characters');
  }
  INVISIBLE.lastIndex = 0;
  if (usernameKey(name) === '') throw new BadRequest('username is required');
}
