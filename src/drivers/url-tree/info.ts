// The storage form's fields and the driver's flags, apart from its implementation: the driver
// registry lists them (admin driver info) without loading the driver (see ../registry.ts).
import { driverConfig, type FormItem, item } from '../types.js';

export const ADDITIONAL: FormItem[] = [
  item('url_structure', 'text', { required: true, help: 'structure:FolderName:\n  [FileName:][FileSize:][Modified:]Url' }),
  item('head_size', 'bool', { default: 'false', help: 'Use head method to get file size, but it may be failed.' }),
  item('writable', 'bool', { default: 'false', help: 'Allow making, renaming, moving, copying and removing entries (stored back into url_structure)' }),
];

export const CONFIG = driverConfig({ name: 'UrlTree', localSort: true, noCache: true, noUpload: true, checkStatus: true });
