import { describe, expect, it } from 'vitest';
import type { Meta, MetasRepo } from '../../src/db/metas.js';
import { ROLE_GENERAL, type User } from '../../src/db/users.js';
import { isKind } from '../../src/errors.js';
import { Metas } from '../../src/fs/metas.js';
import { checkBounds, MAX_PATH_SEGMENTS, underRoot } from '../../src/view/paths.js';
import { Rules, signRule } from '../../src/view/rules.js';
import type { Group } from '../../src/db/groups.js';

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
  group_id: 0,
  ...m,
});

const user: User = { id: 2, username: 'u', pwdHash: '', salt: '', pwdTs: 0, basePath: '/', role: ROLE_GENERAL, permission: 0, otpSecret: '', otpLastStep: 0, disabled: false, ssoId: '', authn: '[]', allowLdap: true };

async function metasOf(list: Meta[]): Promise<{ metas: Metas; lookups: () => number; set(next: Meta[]): Promise<void> }> {
  let rows = list;
  const metas = new Metas({ all: async () => rows } as unknown as MetasRepo, { byId: async () => undefined });
  await metas.reload();
  let n = 0;
  const exact = metas.exact.bind(metas);
  metas.exact = (p: string, groups?: readonly number[]) => {
    n++;
    return exact(p, groups);
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

  it('applies a group rule to its members only, in the place of everyone\'s rule at its path', async () => {
    const group = (id: number) => ({ id, name: `g${id}`, permission: 0, roots: [], quotaBytes: 0, quotaFiles: 0 }) as unknown as Group;
    const m = await metasOf([
      meta({ id: 1, path: '/a', hide: '^everyone', h_sub: true, password: 'pw', p_sub: true }),
      meta({ id: 2, path: '/a', hide: '^seven', h_sub: true, group_id: 7 }),
      meta({ id: 3, path: '/a', hide: '^three', h_sub: true, group_id: 3 }),
      meta({ id: 4, path: '/a/b', write: true, group_id: 7 }),
      meta({ id: 5, path: '/c', hide: '^c', group_id: 9 }),
    ]);
    const nobody = new Rules(m.metas, user);
    const seven = new Rules(m.metas, { ...user, groups: [group(7)] });
    const both = new Rules(m.metas, { ...user, groups: [group(7), group(3)] });
    // Everyone's rule for a non-member; the group's rule, whole, for a member (no password then).
    expect([nobody.isHidden('/a/everyone'), nobody.isHidden('/a/seven'), nobody.passwordOk('/a/x', [''])]).toEqual([true, false, false]);
    expect([seven.isHidden('/a/everyone'), seven.isHidden('/a/seven'), seven.passwordOk('/a/x', [''])]).toEqual([false, true, true]);
    // Two groups' rules at one path: the lower group id's.
    expect([both.isHidden('/a/three'), both.isHidden('/a/seven')]).toEqual([true, false]);
    // The nearest path still wins: the group's /a/b rule (write, no hide) covers /a/b for members.
    expect([seven.canWrite('/a/b'), nobody.canWrite('/a/b'), seven.isHidden('/a/b/seven')]).toEqual([true, false, false]);
    expect([seven.mayHideInside('/c'), new Rules(m.metas, { ...user, groups: [group(9)] }).mayHideInside('/c')]).toEqual([false, true]);
    expect(nobody.lockedInside('/', [''])).toBe(true);
    expect(seven.lockedInside('/', [''])).toBe(false);
    // A raw link names no one: it needs a sign when any audience's rule protects it.
    expect(signRule(m.metas, '/c')('c')).toBe(true);
    expect(signRule(m.metas, '/c')('d')).toBe(false);
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
