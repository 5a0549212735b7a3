import type { FastifyRequest } from 'fastify';
import type { EventOp } from '../audit/events.js';
import { Recorder } from '../audit/record.js';
import type { Core } from '../core.js';
import type { Principal } from '../auth/accounts.js';
import { originOf } from '../http/origin.js';

/**
 * Runs an admin change of storages, metas, settings or keys and emits its event (the acting
 * user, `path` the object's name: mount path, meta path, setting key, key title). Users and
 * shares are recorded by their own services (auth/accounts.ts, shares/service.ts).
 */
export function adminChange<T>(core: Core, ctx: { principal: Principal; req: FastifyRequest }, op: EventOp, targets: string | string[], fn: () => Promise<T>): Promise<T> {
  const rec = new Recorder(core.events, ctx.principal.user.username, originOf(ctx.req, 'api'));
  const list = [targets].flat();
  return list.length === 1 ? rec.run(op, list[0]!, fn) : rec.runEach(op, list.map((p) => [p, undefined]), fn);
}
