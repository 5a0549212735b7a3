import { CONFIG as ALIAS, ADDITIONAL as ALIAS_ITEMS } from './alias/info.js';
import { CONFIG as ALIST_V3, ADDITIONAL as ALIST_V3_ITEMS } from './alist-v3/info.js';
import { CONFIG as AUTOINDEX, ADDITIONAL as AUTOINDEX_ITEMS } from './autoindex/info.js';
import { CONFIG as AZURE_BLOB, ADDITIONAL as AZURE_BLOB_ITEMS } from './azure-blob/info.js';
import { CONFIG as CHUNK, ADDITIONAL as CHUNK_ITEMS } from './chunk/info.js';
import { CONFIG as CRYPT, ADDITIONAL as CRYPT_ITEMS } from './crypt/info.js';
import { CONFIG as FTP, ADDITIONAL as FTP_ITEMS } from './ftp/info.js';
import { localDriver } from './local/index.js';
import { CONFIG as OPENLIST, ADDITIONAL as OPENLIST_ITEMS } from './openlist/info.js';
import { CONFIG as OPENLIST_SHARE, ADDITIONAL as OPENLIST_SHARE_ITEMS } from './openlist-share/info.js';
import { CONFIG as S3, ADDITIONAL as S3_ITEMS } from './s3/info.js';
import { CONFIG as SFTP, ADDITIONAL as SFTP_ITEMS } from './sftp/info.js';
import { CONFIG as SMB, ADDITIONAL as SMB_ITEMS } from './smb/info.js';
import { CONFIG as STRM, ADDITIONAL as STRM_ITEMS } from './strm/info.js';
import { CONFIG as URL_TREE, ADDITIONAL as URL_TREE_ITEMS } from './url-tree/info.js';
import { CONFIG as VIRTUAL, ADDITIONAL as VIRTUAL_ITEMS } from './virtual/info.js';
import { CONFIG as WEBDAV, ADDITIONAL as WEBDAV_ITEMS } from './webdav/info.js';
import type { DriverConfig, DriverFactory, FormItem } from './types.js';

/** Every driver this server knows, by its wire name (the storage's `driver` field). */
const DRIVERS = new Map<string, DriverFactory>();

/** Adds a driver under its config name (the built-in ones below; tests add their own). */
export function registerDriver(factory: DriverFactory): void {
  DRIVERS.set(factory.config.name, factory);
}

/**
 * A driver known by its fields and flags (its `info.ts`) whose implementation is imported when
 * the first storage of it mounts: the built server keeps each driver in a chunk of its own
 * (scripts/build-server.mjs), so listing drivers or starting with Local storages alone reads
 * none of them, nor the packages they load.
 */
function lazyDriver(config: DriverConfig, additional: FormItem[], load: () => Promise<DriverFactory>): DriverFactory {
  return { config, additional, create: async (addition, ctx) => (await load()).create(addition, ctx) };
}

registerDriver(localDriver);
registerDriver(lazyDriver(ALIAS, ALIAS_ITEMS, async () => (await import('./alias/index.js')).aliasDriver));
registerDriver(lazyDriver(CRYPT, CRYPT_ITEMS, async () => (await import('./crypt/index.js')).cryptDriver));
registerDriver(lazyDriver(ALIST_V3, ALIST_V3_ITEMS, async () => (await import('./alist-v3/index.js')).alistV3Driver));
registerDriver(lazyDriver(URL_TREE, URL_TREE_ITEMS, async () => (await import('./url-tree/index.js')).urlTreeDriver));
registerDriver(lazyDriver(VIRTUAL, VIRTUAL_ITEMS, async () => (await import('./virtual/index.js')).virtualDriver));
registerDriver(lazyDriver(SFTP, SFTP_ITEMS, async () => (await import('./sftp/index.js')).sftpDriver));
registerDriver(lazyDriver(S3, S3_ITEMS, async () => (await import('./s3/index.js')).s3Driver));
registerDriver(lazyDriver({ ...S3, name: 'Doge' }, S3_ITEMS, async () => (await import('./s3/index.js')).dogeDriver));
registerDriver(lazyDriver(FTP, FTP_ITEMS, async () => (await import('./ftp/index.js')).ftpDriver));
registerDriver(lazyDriver(WEBDAV, WEBDAV_ITEMS, async () => (await import('./webdav/index.js')).webdavDriver));
registerDriver(lazyDriver(STRM, STRM_ITEMS, async () => (await import('./strm/index.js')).strmDriver));
registerDriver(lazyDriver(CHUNK, CHUNK_ITEMS, async () => (await import('./chunk/index.js')).chunkDriver));
registerDriver(lazyDriver(AUTOINDEX, AUTOINDEX_ITEMS, async () => (await import('./autoindex/index.js')).autoindexDriver));
registerDriver(lazyDriver(AZURE_BLOB, AZURE_BLOB_ITEMS, async () => (await import('./azure-blob/index.js')).azureBlobDriver));
registerDriver(lazyDriver(OPENLIST, OPENLIST_ITEMS, async () => (await import('./openlist/index.js')).openListDriver));
registerDriver(lazyDriver(OPENLIST_SHARE, OPENLIST_SHARE_ITEMS, async () => (await import('./openlist-share/index.js')).openListShareDriver));
registerDriver(lazyDriver(SMB, SMB_ITEMS, async () => (await import('./smb/index.js')).smbDriver));

/** Names OpenList gave drivers before (its first AutoIndex was `Autoindex`): storages saved under them still mount. */
const FORMER_NAMES: Record<string, string> = { Autoindex: 'AutoIndex' };

export function driverFactory(name: string): DriverFactory | undefined {
  return DRIVERS.get(name) ?? DRIVERS.get(FORMER_NAMES[name] ?? '');
}

export function driverNames(): string[] {
  return [...DRIVERS.keys()];
}
