import { autoindexDriver } from './autoindex/index.js';
import { azureBlobDriver } from './azure-blob/index.js';
import { chunkDriver } from './chunk/index.js';
import { ftpDriver } from './ftp/index.js';
import { localDriver } from './local/index.js';
import { openListDriver } from './openlist/index.js';
import { openListShareDriver } from './openlist-share/index.js';
import { aliasDriver } from './alias/index.js';
import { cryptDriver } from './crypt/index.js';
import { alistV3Driver } from './alist-v3/index.js';
import { urlTreeDriver } from './url-tree/index.js';
import { virtualDriver } from './virtual/index.js';
import { dogeDriver, s3Driver } from './s3/index.js';
import { sftpDriver } from './sftp/index.js';
import { smbDriver } from './smb/index.js';
import { strmDriver } from './strm/index.js';
import { webdavDriver } from './webdav/index.js';
import type { DriverFactory } from './types.js';

/** Every driver this server knows, by its wire name (the storage's `driver` field). */
const DRIVERS = new Map<string, DriverFactory>();

/** Adds a driver under its config name (the built-in ones below; tests add their own). */
export function registerDriver(factory: DriverFactory): void {
  DRIVERS.set(factory.config.name, factory);
}

registerDriver(localDriver);
registerDriver(aliasDriver);
registerDriver(cryptDriver);
registerDriver(alistV3Driver);
registerDriver(urlTreeDriver);
registerDriver(virtualDriver);
registerDriver(sftpDriver);
registerDriver(s3Driver);
registerDriver(dogeDriver);
registerDriver(ftpDriver);
registerDriver(webdavDriver);
registerDriver(strmDriver);
registerDriver(chunkDriver);
registerDriver(autoindexDriver);
registerDriver(azureBlobDriver);
registerDriver(openListDriver);
registerDriver(openListShareDriver);
registerDriver(smbDriver);

/** Names OpenList gave drivers before (its first AutoIndex was `Autoindex`): storages saved under them still mount. */
const FORMER_NAMES: Record<string, string> = { Autoindex: 'AutoIndex' };

export function driverFactory(name: string): DriverFactory | undefined {
  return DRIVERS.get(name) ?? DRIVERS.get(FORMER_NAMES[name] ?? '');
}

export function driverNames(): string[] {
  return [...DRIVERS.keys()];
}
