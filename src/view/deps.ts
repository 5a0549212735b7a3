import type { Archives } from '../archive/service.js';
import type { OpEvents } from '../audit/events.js';
import type { Fs } from '../fs/fs.js';
import type { FileLocks } from '../fs/locks.js';
import type { TrashBin } from '../fs/trash.js';
import type { Metas } from '../fs/metas.js';
import type { Signer } from '../fs/sign.js';
import type { FsWriter } from '../fs/write.js';
import type { Logger } from '../logger.js';
import type { LinkFetcher } from '../net/link-fetch.js';
import type { Settings } from '../settings/service.js';
import type { Thumbs } from '../thumbs/service.js';
import type { PrincipalSource } from './live.js';
import type { AccountMeters } from './meters.js';
import type { Quotas } from './quota.js';

/**
 * The services the per-user view works with: what the composition root (core.ts) hands it. The
 * view names them here rather than taking the whole Core, so nothing below the fronts imports
 * the composition root.
 */
export interface ViewDeps {
  fs: Fs;
  writer: FsWriter;
  metas: Metas;
  settings: Settings;
  links: LinkFetcher;
  archives: Archives;
  locks: FileLocks;
  trash: TrashBin;
  events: OpEvents;
  signer: Signer;
  log: Logger;
  thumbs: Thumbs;
  /** Quotas of users and groups, decided before a write's bytes are stored. */
  quotas: Quotas;
  /** Each account's rates and transfers in flight (max_transfers), shared by every front. */
  meters: AccountMeters;
  repos: { users: PrincipalSource };
}
