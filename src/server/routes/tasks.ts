import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Principal } from '../../auth/accounts.js';
import { isAdmin, isGuest } from '../../auth/permissions.js';
import type { Core } from '../../core.js';
import { Forbidden, NotFound } from '../../errors.js';
import { DONE_STATES, STATE, type Task, taskJson } from '../../tasks/manager.js';
import { TASK_KIND_NAMES, type TaskKind } from '../../tasks/kinds.js';
import { type AuthLevel, apiRoute } from '../route.js';
import { oneOf } from '../route-table.js';
import { taskShape } from '../shapes.js';

export const MSG_TASK_NOT_FOUND = 'task not found';
export const MSG_GUEST = 'You are a guest';

const tidQuery = z.object({ tid: z.string({ error: 'tid is required' }).min(1, 'tid is required') });
const tidList = z.array(z.string());

/**
 * Task verbs of wire-api.md §12.4 for every kind, under both path families: `/api/admin/task/<kind>`
 * (admins, all tasks) and `/api/task/<kind>` (any signed-in user but the guest; non-admins see
 * and act on the tasks they created, and others' tasks are "not found" to them). The kind is a
 * `oneOf` segment: one route per verb and family stands for the routes of the seven kinds
 * (listed one per kind; any other kind is not found, as before).
 */
export function taskRoutes(app: FastifyInstance, core: Core): void {
  const kind = oneOf('kind', TASK_KIND_NAMES);
  familyRoutes(app, core, `/api/admin/task/${kind}`, 'admin');
  familyRoutes(app, core, `/api/task/${kind}`, 'user');
}

/** The task kind of a request to a route of `taskRoutes` (the router only lets the seven through). */
const kindOf = (req: FastifyRequest): TaskKind => (req.params as { kind: TaskKind }).kind;

function familyRoutes(app: FastifyInstance, core: Core, base: string, auth: AuthLevel): void {
  const lookup = taskLookup(core);
  listRoutes(app, core, base, auth, lookup);
  verbRoutes(app, core, base, auth, lookup);
  clearRoutes(app, core, base, auth, lookup);
  batchRoutes(app, core, base, auth, lookup);
}

type TaskLookup = ReturnType<typeof taskLookup>;

/** The tasks of a kind a caller sees: an admin all, a user their own, a guest none. */
function taskLookup({ tasks }: Core) {
  const visible = async (p: Principal, kind: TaskKind): Promise<Task[]> => {
    if (isGuest(p.user)) throw new Forbidden(MSG_GUEST);
    const all = await tasks.listShared(kind);
    return isAdmin(p.user) ? all : all.filter((t) => t.creatorId === p.user.id);
  };
  const find = async (p: Principal, kind: TaskKind, tid: string): Promise<Task | undefined> => (await visible(p, kind)).find((t) => t.id === tid);
  const mustFind = async (p: Principal, kind: TaskKind, tid: string): Promise<Task> => {
    const t = await find(p, kind, tid);
    if (!t) throw new NotFound(MSG_TASK_NOT_FOUND);
    return t;
  };
  return { visible, find, mustFind };
}

/** `undone`, `done`, `info`. */
function listRoutes(app: FastifyInstance, core: Core, base: string, auth: AuthLevel, { visible, mustFind }: TaskLookup): void {
  apiRoute(app, core, {
    method: 'GET',
    url: `${base}/undone`,
    output: z.array(taskShape),
    auth,
    handler: async ({ principal, req }) => (await visible(principal, kindOf(req))).filter((t) => !DONE_STATES.has(t.state)).map(taskJson),
  });
  apiRoute(app, core, {
    method: 'GET',
    url: `${base}/done`,
    output: z.array(taskShape),
    auth,
    handler: async ({ principal, req }) => (await visible(principal, kindOf(req))).filter((t) => DONE_STATES.has(t.state)).map(taskJson),
  });
  apiRoute(app, core, {
    method: 'POST',
    url: `${base}/info`,
    output: taskShape,
    auth,
    input: tidQuery,
    from: 'query',
    handler: async ({ principal, input, req }) => taskJson(await mustFind(principal, kindOf(req), input.tid)),
  });
}

/** `cancel`, `delete`, `retry` of one task. */
function verbRoutes(app: FastifyInstance, core: Core, base: string, auth: AuthLevel, { find }: TaskLookup): void {
  const { tasks } = core;
  // As AList, cancel/delete/retry of an id the caller can't see succeed without doing anything.
  apiRoute(app, core, {
    method: 'POST',
    url: `${base}/cancel`,
    output: z.null(),
    auth,
    input: tidQuery,
    from: 'query',
    handler: async ({ principal, input, req }) => {
      if (await find(principal, kindOf(req), input.tid)) await tasks.cancelShared(input.tid);
      return null;
    },
  });
  apiRoute(app, core, {
    method: 'POST',
    url: `${base}/delete`,
    output: z.null(),
    auth,
    input: tidQuery,
    from: 'query',
    handler: async ({ principal, input, req }) => {
      if (await find(principal, kindOf(req), input.tid)) await tasks.removeShared(input.tid);
      return null;
    },
  });
  apiRoute(app, core, {
    method: 'POST',
    url: `${base}/retry`,
    output: z.null(),
    auth,
    input: tidQuery,
    from: 'query',
    handler: async ({ principal, input, req }) => {
      if (await find(principal, kindOf(req), input.tid)) await tasks.retryShared(input.tid);
      return null;
    },
  });
}

/** `clear_done`, `clear_succeeded`, `retry_failed`. */
function clearRoutes(app: FastifyInstance, core: Core, base: string, auth: AuthLevel, { visible }: TaskLookup): void {
  const { tasks } = core;
  apiRoute(app, core, {
    method: 'POST',
    url: `${base}/clear_done`,
    output: z.null(),
    auth,
    handler: async ({ principal, req }) => {
      for (const t of await visible(principal, kindOf(req))) if (DONE_STATES.has(t.state)) await tasks.removeShared(t.id);
      return null;
    },
  });
  apiRoute(app, core, {
    method: 'POST',
    url: `${base}/clear_succeeded`,
    output: z.null(),
    auth,
    handler: async ({ principal, req }) => {
      for (const t of await visible(principal, kindOf(req))) if (t.state === STATE.SUCCEEDED) await tasks.removeShared(t.id);
      return null;
    },
  });
  apiRoute(app, core, {
    method: 'POST',
    url: `${base}/retry_failed`,
    output: z.null(),
    auth,
    handler: async ({ principal, req }) => {
      for (const t of await visible(principal, kindOf(req))) if (t.state === STATE.FAILED) await tasks.retryShared(t.id);
      return null;
    },
  });
}

/** `cancel_some`, `delete_some`, `retry_some`. */
function batchRoutes(app: FastifyInstance, core: Core, base: string, auth: AuthLevel, { find }: TaskLookup): void {
  const { tasks } = core;
  // Batch forms (OpenList): a JSON array of ids; the answer maps each id that failed to why.
  const some = (verb: string, act: (t: Task) => Promise<unknown> | unknown) =>
    apiRoute(app, core, {
      method: 'POST',
      url: `${base}/${verb}_some`,
    output: z.record(z.string(), z.string()).describe("task id → why it was not found"),
      auth,
      input: tidList,
      handler: async ({ principal, input, req }) => {
        const errors: Record<string, string> = {};
        const kind = kindOf(req);
        for (const tid of input) {
          const t = await find(principal, kind, tid);
          if (!t) errors[tid] = MSG_TASK_NOT_FOUND;
          else await act(t);
        }
        return errors;
      },
    });
  some('cancel', (t) => tasks.cancelShared(t.id));
  some('delete', (t) => tasks.removeShared(t.id));
  some('retry', (t) => tasks.retryShared(t.id));
}
