import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trailingSlashRedirect } from '../../src/server/app.js';
import { concreteUrl, expandOneOf, oneOf } from '../../src/server/route-table.js';
import { TASK_KIND_NAMES } from '../../src/tasks/kinds.js';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const VERBS = ['undone', 'done', 'info', 'cancel', 'delete', 'retry', 'clear_done', 'clear_succeeded', 'retry_failed', 'cancel_some', 'delete_some', 'retry_some'];

describe('oneOf path segments', () => {
  it('stand for one URL per value, in the route table and the metrics label', () => {
    const seg = oneOf('kind', ['copy', 'move', 'offline_download']);
    expect(expandOneOf(`/api/task/${seg}/info`)).toEqual(['/api/task/copy/info', '/api/task/move/info', '/api/task/offline_download/info']);
    expect(expandOneOf(`/x/${oneOf('a', ['1', '2'])}/${oneOf('b', ['p', 'q'])}`)).toEqual(['/x/1/p', '/x/1/q', '/x/2/p', '/x/2/q']);
    expect(expandOneOf('/api/fs/list')).toEqual(['/api/fs/list']);
    expect(concreteUrl(`/api/task/${seg}/info`, { kind: 'move' })).toBe('/api/task/move/info');
    expect(concreteUrl('/sd/:sid', { sid: 'abc' })).toBe('/sd/:sid');
    expect(() => oneOf('kind', ['a|b'])).toThrow(/words/);
    expect(() => oneOf('kind', [])).toThrow();
  });
});

/**
 * The task routes are one router entry per verb and family with the kind as a `oneOf` segment;
 * these check that they answer as the 168 separate routes did: each kind reaches its own tasks,
 * any other kind (unknown, another case, over-long) is a missing route, the trailing-slash
 * redirect still finds them, and the route table lists every kind's route.
 */
describe('task routes, one per verb with the kind as a parameter', () => {
  let s: TestServer;
  let token: string;
  let root: string;

  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!);
    root = makeTree({ 'a/src/one.txt': 'one', 'b/': '' });
    token = await s.login();
    expect((await s.api('POST', '/api/admin/storage/create', { token, body: localStorage('/a', path.join(root, 'a')) })).code).toBe(200);
    expect((await s.api('POST', '/api/admin/storage/create', { token, body: localStorage('/b', path.join(root, 'b')) })).code).toBe(200);
  });
  afterAll(async () => {
    await s.destroy();
    rmSync(root, { recursive: true, force: true });
  });

  it('lists one route per kind, verb and family in the route table', () => {
    const listed = new Set(s.app.routeTable.routes.map((r) => `${r.method} ${r.url}`));
    for (const family of ['/api/admin/task', '/api/task']) {
      for (const kind of TASK_KIND_NAMES) {
        for (const verb of VERBS) expect(listed.has(`${verb === 'undone' || verb === 'done' ? 'GET' : 'POST'} ${family}/${kind}/${verb}`), `${family}/${kind}/${verb}`).toBe(true);
      }
    }
    expect([...listed].filter((r) => r.includes('/task/')).length).toBe(2 * TASK_KIND_NAMES.length * (VERBS.length + 2)); // + HEAD of undone and done
    expect([...listed].some((r) => r.includes(':kind'))).toBe(false);
  });

  it("reaches the kind's own tasks: a copy task is under copy, not under move", async () => {
    const r = await s.api('POST', '/api/fs/copy', { token, body: { src_dir: '/a', dst_dir: '/b', names: ['src'] } });
    expect(r.code, r.message).toBe(200);
    const done = await waitFor(async () => {
      const d = await s.api('GET', '/api/admin/task/copy/done', { token });
      return d.data?.length ? d.data : undefined;
    }, 10_000, 20);
    expect(readFileSync(path.join(root, 'b/src/one.txt'), 'utf8')).toBe('one');
    const id = done[0].id as string;
    expect((await s.api('POST', `/api/admin/task/copy/info?tid=${id}`, { token })).data.id).toBe(id);
    expect((await s.api('POST', `/api/task/copy/info?tid=${id}`, { token })).data.id).toBe(id);
    expect(await s.api('POST', `/api/admin/task/move/info?tid=${id}`, { token })).toMatchObject({ code: 404, message: 'task not found' });
    expect((await s.api('GET', '/api/admin/task/move/done', { token })).data).toEqual([]);
    expect((await s.api('POST', '/api/admin/task/move/delete_some', { token, body: [id] })).data).toEqual({ [id]: 'task not found' });
    expect((await s.api('POST', '/api/admin/task/copy/delete_some', { token, body: [id] })).data).toEqual({});
    expect((await s.api('GET', '/api/admin/task/copy/done', { token })).data).toEqual([]);
  });

  it('answers any other kind as a missing route, before authentication', async () => {
    for (const kind of ['bogus', 'Copy', 'copyx', 'x'.repeat(150), 'copy%2Fdone']) {
      for (const [method, verb] of [['GET', 'undone'], ['POST', 'info?tid=1'], ['POST', 'clear_done']] as const) {
        const res = await s.inject({ method, url: `/api/admin/task/${kind}/${verb}` });
        expect(res.statusCode, `${method} ${kind}`).toBe(200);
        expect(res.json(), `${method} ${kind}`).toEqual({ code: 404, message: `route ${method} /api/admin/task/${kind}/${verb.split('?')[0]} not found`, data: null });
      }
    }
    // A known kind, percent-encoded, is that kind (as the router matched the static routes).
    expect((await s.inject({ method: 'GET', url: '/api/admin/task/cop%79/undone', headers: { authorization: token } })).json()).toMatchObject({ code: 200, data: [] });
  });

  it('keeps the trailing-slash redirect of every kind, and none for other kinds', async () => {
    const get = await s.inject({ method: 'GET', url: '/api/task/decompress_upload/undone/' });
    expect([get.statusCode, get.headers.location]).toEqual([301, '/api/task/decompress_upload/undone']);
    const post = await s.inject({ method: 'POST', url: '/api/admin/task/offline_download/retry/?tid=1' });
    expect([post.statusCode, post.headers.location]).toEqual([307, '/api/admin/task/offline_download/retry?tid=1']);
    expect(trailingSlashRedirect(s.app, 'HEAD', '/api/task/upload/done/')).toEqual({ location: '/api/task/upload/done', status: 307 });
    expect(trailingSlashRedirect(s.app, 'GET', '/api/task/bogus/done/')).toBeUndefined();
    expect(trailingSlashRedirect(s.app, 'GET', '/api/task/upload/info/')).toBeUndefined(); // info is POST only
  });
});
