import { z } from 'zod';
import { rootShape } from '../shapes.js';
import { int } from '../validation.js';

/**
 * What a user and a group both carry in the admin API's create and update bodies: extra roots, a
 * quota and the limits (docs/access-and-security.md, groups; each left out keeps its value).
 */
export const accountFields = {
  roots: z.array(rootShape).max(64).optional(),
  quota_bytes: int().optional(),
  quota_files: int().optional(),
  upload_rate: int().optional(),
  download_rate: int().optional(),
  max_transfers: int().optional(),
  max_sessions: int().optional(),
};
