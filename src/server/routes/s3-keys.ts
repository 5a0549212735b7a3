import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ownAccount } from '../../auth/permissions.js';
import type { Core } from '../../core.js';
import type { S3Key } from '../../db/user-keys.js';
import { Exists, TooLarge } from '../../errors.js';
import { isoTime } from '../../fs/objects.js';
import { apiRoute } from '../route.js';
import { pageShape, s3KeyShape } from '../shapes.js';
import { deleteOwnKeyRoute, keyTitle } from './own-keys.js';
import { adminChange } from '../admin-change.js';

const keyJson = (k: S3Key) => ({ id: k.id, title: k.title, access_key_id: k.accessKey, added_time: isoTime(k.addedTime), last_used_time: isoTime(k.lastUsedTime) });
const MAX_KEYS_PER_USER = 20;

/** `/api/me/s3key/*`: a user's own S3 access keys; the secret is shown once, when made. */
export function s3KeyRoutes(app: FastifyInstance, core: Core): void {
  const repo = () => core.repos.s3Keys;

  apiRoute(app, core, {
    method: 'GET',
    url: '/api/me/s3key/list',
    output: pageShape(s3KeyShape),
    auth: 'user',
    handler: async ({ principal }) => {
      const keys = await repo().ofUser(ownAccount(principal.user).id);
      return { content: keys.map(keyJson), total: keys.length };
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/me/s3key/create',
    // OpenList answers a taken title and the key limit 500 with the text.
    codes: [['Exists', 500], ['TooLarge', 500]],
    output: z.object({ id: z.number().int(), title: z.string(), access_key_id: z.string(), secret_access_key: z.string().describe('shown only here') }),
    auth: 'user',
    input: z.object({ title: keyTitle() }),
    handler: ({ input, principal, req }) => adminChange(core, { principal, req }, 'key_create', `s3:${input.title}`, async () => {
      const user = ownAccount(principal.user);
      const existing = await repo().ofUser(user.id);
      if (existing.length >= MAX_KEYS_PER_USER) throw new TooLarge(`at most ${MAX_KEYS_PER_USER} keys per user`);
      if (existing.some((k) => k.title === input.title)) throw new Exists('key with the same title already exists');
      const accessKey = `AT${randomBytes(9).toString('hex').toUpperCase()}`;
      const secret = randomBytes(30).toString('base64url');
      const id = await repo().create({ userId: user.id, title: input.title, accessKey, secret, addedTime: Date.now(), lastUsedTime: 0 });
      return { id, title: input.title, access_key_id: accessKey, secret_access_key: secret };
    }),
  });

  deleteOwnKeyRoute(app, core, '/api/me/s3key/delete', repo);
}
