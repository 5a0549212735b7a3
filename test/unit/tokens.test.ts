import { afterEach, describe, expect, it, vi } from 'vitest';
import type { SessionsRepo } from '../../src/db/sessions.js';
import type { User } from '../../src/db/users.js';
import { MSG, TokenService } from '../../src/auth/tokens.js';

/** Sessions in memory: a token is valid while its row is here. */
function sessions() {
  const rows = new Map<string, number>();
  const repo = {
    create: async (s: { id: string; expiresAt: number }) => void rows.set(s.id, s.expiresAt),
    exists: async (id: string, now: number) => (rows.get(id) ?? 0) > now,
    delete: async (id: string) => void rows.delete(id),
  } as unknown as SessionsRepo;
  return { repo, rows };
}

const user = { id: 7, username: 'alice', pwdTs: 1234 } as User;
const meta = { ip: '127.0.0.1', userAgent: 'test' };

describe('TokenService', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a token verified before is checked again for its times, its session and its bytes on every use', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
    const s = sessions();
    const tokens = new TokenService('a-secret-of-some-length', 1, s.repo);
    const token = await tokens.issue(user, meta);
    const claims = await tokens.verify(token);
    expect(claims.username).toBe('alice');
    expect(claims.pwdTs).toBe(1234);
    // Again (remembered): the same answer.
    expect(await tokens.verify(token)).toEqual(claims);
    // Another signature on the same header and payload is refused, remembered or not.
    const [h, p] = token.split('.');
    await expect(tokens.verify(`${h}.${p}.${'A'.repeat(43)}`)).rejects.toMatchObject({ kind: 'Unauthorized', message: MSG.invalidated });
    // Past its lifetime (1 hour) the remembered token is expired, as a new one would be.
    vi.setSystemTime(new Date('2026-01-01T01:00:01Z'));
    await expect(tokens.verify(token)).rejects.toMatchObject({ kind: 'Unauthorized', message: MSG.expired });
    await expect(tokens.verify(token)).rejects.toMatchObject({ kind: 'Unauthorized', message: MSG.expired });
  });

  it('a remembered token whose session was revoked is refused', async () => {
    const s = sessions();
    const tokens = new TokenService('a-secret-of-some-length', 1, s.repo);
    const token = await tokens.issue(user, meta);
    const { sessionId } = await tokens.verify(token);
    await tokens.revoke(sessionId);
    await expect(tokens.verify(token)).rejects.toMatchObject({ kind: 'Unauthorized', message: MSG.invalidated });
  });

  it('a token signed with another secret is refused', async () => {
    const s = sessions();
    const other = await new TokenService('another-secret-entirely', 1, s.repo).issue(user, meta);
    const tokens = new TokenService('a-secret-of-some-length', 1, s.repo);
    await expect(tokens.verify(other)).rejects.toMatchObject({ kind: 'Unauthorized', message: MSG.invalidated });
  });
});
