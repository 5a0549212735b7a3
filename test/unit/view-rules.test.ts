import { describe, expect, it } from 'vitest';
import type { Meta, MetasRepo } from '../../src/db/metas.js';
import { ROLE_GENERAL, type User } from '../../src/db/users.js';
import { isKind } from '../../src/errors.js';
import { Metas } from '../../src/fs/metas.js';
import { checkBounds, MAX_PATH_SEGMENTS, underRoot } from '../../src/view/paths.js';
import { Rules } from '../../src/view/rules.js';

const meta = (m: Partial<Meta> & { path: string }): Meta => ({
  id: 0,
  password: '',
  p_sub: false,
  write: false,
  w_sub: false,
  hide: '',
  h_sub: false,
  readme: '',
  r_sub: false,
  header: '',
  header_sub: false,
  ...m,
});

const user: User = { id: 2, username: 'u', pwdHash: '', salt: '', pwdTs: 0, basePath: '/', role: ROLE_GENERAL, permission: 0, otpSecret: '', otpLastStep: 0, disabled: false, ssoId: '', authn: '[]', allowLdap: true };

async function metasOf(list: Meta[]): Promise<{ metas: Metas; lookups: () => number; set(next: Meta[]): Promise<void> }> {
  let rows = list;
  const metas = new Metas({ all: async () => rows } as unknown as MetasRepo);
  await metas.reload();
  let n = 0;
  const exact = metas.exact.bind(metas);
  metas.exact = (p: string) => {
    n++;
    return exact(p);
  };
  return {
    metas,
    lookups: () => n,
    async set(next) {
      rows = next;
      await metas.reload();
    },
  };
}

describe('the view rules', () => {
  it('checks every ancestor of a path with one rule lookup per ancestor', async () => {
    const m = await metasOf([meta({ path: '/', hide: '^secret', h_sub: true })]);
    const rules = new Rules(m.metas, user);
    const deep = `/${Array.from({ length: MAX_PATH_SEGMENTS }, (_, i) => `d${i}`).join('/')}`;
    expect(rules.isHidden(deep)).toBe(false);
    expect(m.lookups()).toBeLessThanOrEqual(MAX_PATH_SEGMENTS + 1);
    const before = m.lookups();
    expect(rules.isHidden(`${deep.slice(0, deep.lastIndexOf('/'))}/secret.txt`)).toBe(true);
    // Every ancestor was already known: no new lookups.
    expect(m.lookups()).toBe(before);
  });

  it('follows the rules as the admin changes them', async () => {
    const m = await metasOf([]);
    const rules = new Rules(m.metas, user);
    expect(rules.isHidden('/a/secret')).toBe(false);
    await m.set([meta({ path: '/a', hide: '^secret' })]);
    expect(rules.isHidden('/a/secret')).toBe(true);
    expect(rules.passwordOk('/a/x', [''])).toBe(true);
    await m.set([meta({ path: '/a', password: 'pw', p_sub: true })]);
    expect(rules.passwordOk('/a/x', [''])).toBe(false);
    expect(rules.passwordOk('/a/x', ['', 'pw'])).toBe(true);
  });

  it('says when a folder carries hidden or protected contents', async () => {
    const m = await metasOf([meta({ path: '/a/b/c', password: 'pw' }), meta({ path: '/x/y', hide: '^s' })]);
    const rules = new Rules(m.metas, user);
    expect(rules.lockedInside('/a', [''])).toBe(true);
    expect(rules.lockedInside('/a', ['pw'])).toBe(false);
    expect(rules.lockedInside('/a/b/c', [''])).toBe(false); // its own rule is checked on the path itself
    expect(rules.mayHideInside('/x')).toBe(true);
    expect(rules.mayHideInside('/x/y')).toBe(true);
    expect(rules.mayHideInside('/a')).toBe(false);
  });

  it('bounds and cleans paths the same way for every front', () => {
    const tooDeep = `/${'a/'.repeat(MAX_PATH_SEGMENTS + 1)}`;
    expect(() => checkBounds(tooDeep)).toThrow(/path is too long/);
    expect(() => checkBounds(`/${'x'.repeat(4097)}`)).toThrow(/path is too long/);
    let caught: unknown;
    try {
      underRoot('/', tooDeep, 'navigate');
    } catch (err) {
      caught = err;
    }
    expect(isKind(caught, 'PathTooLong')).toBe(true);
    expect(() => underRoot('/u', '/../x', 'strict')).toThrow(/relative path/);
    expect(underRoot('/u', '/../x', 'navigate')).toBe('/u/x');
    expect(underRoot('/u', '/a/./b/../c', 'navigate')).toBe('/u/a/c');
    expect(underRoot('/', '\\a\\b', 'strict')).toBe('/a/b');
    // The root plus the client's path must fit too.
    expect(() => underRoot(`/${'r/'.repeat(10)}r`, `/${'a/'.repeat(MAX_PATH_SEGMENTS - 5)}a`, 'strict')).toThrow(/path is too long/);
  });
});
