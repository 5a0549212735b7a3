import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DavLocksRepo } from '../../src/db/dav-locks.js';
import { FileLocks } from '../../src/fs/locks.js';
import { BACKENDS } from '../helpers/backends.js';
import { startServer, type TestServer } from '../helpers/server.js';

const exclusive = { depth: '0' as const, scope: 'exclusive' as const, owner: '', timeout: 60, userId: 1 };

/**
 * Taking a lock is one decision across processes: several FileLocks on one database (as the
 * processes of a cluster hold them, and one process's own) asked at once for clashing locks
 * grant exactly one.
 */
describe.each(BACKENDS)('WebDAV lock creation is atomic on $name', (backend) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer(backend);
  });
  afterAll(async () => {
    await s.destroy();
  });

  it('twenty concurrent exclusive locks of one file from four "processes": one granted, the others see it', async () => {
    const processes = Array.from({ length: 4 }, () => new FileLocks(new DavLocksRepo(s.core.db), true));
    for (let round = 0; round < 3; round++) {
      const root = `/atomic/f${round}.txt`;
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => processes[i % 4]!.create(root, exclusive)));
      const granted = answers.filter((a) => a.lock);
      expect(granted).toHaveLength(1);
      for (const a of answers) if (!a.lock) expect(a.conflict?.token).toBe(granted[0]!.lock!.token);
      const rows = await s.core.db.db.selectFrom('dav_locks').select('token').where('root', '=', root).execute();
      expect(rows.map((r) => r.token)).toEqual([granted[0]!.lock!.token]);
    }
  });

  it('one process alone (its cached lock table) grants one of concurrent clashing locks; shared locks side by side', async () => {
    const one = new FileLocks(new DavLocksRepo(s.core.db), false);
    const root = '/atomic/single.txt';
    const answers = await Promise.all(Array.from({ length: 10 }, () => one.create(root, exclusive)));
    expect(answers.filter((a) => a.lock)).toHaveLength(1);
    const sharedAnswers = await Promise.all(Array.from({ length: 5 }, () => one.create('/atomic/shared.txt', { ...exclusive, scope: 'shared' })));
    expect(sharedAnswers.every((a) => a.lock)).toBe(true);
    // a depth-infinity exclusive lock of the folder clashes with both
    const deep = await one.create('/atomic', { ...exclusive, depth: 'infinity' });
    expect(deep.conflict).toBeDefined();
  });
});
