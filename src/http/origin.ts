import type { FastifyRequest } from 'fastify';
import type { EventFront, EventOrigin } from '../audit/events.js';

/** Who asks and from where, for the view's operation events: the front, the client's address and the request's id. */
export const originOf = (req: FastifyRequest, front: EventFront): EventOrigin => ({ front, ip: req.ip, requestId: String(req.id) });
