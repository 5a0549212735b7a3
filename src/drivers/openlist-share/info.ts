// The storage form's fields and the driver's flags, apart from its implementation: the driver
// registry lists them (admin driver info) without loading the driver (see ../registry.ts).
import { driverConfig, type FormItem, item } from '../types.js';

// OpenList's items, in its order (drivers/openlist_share/meta.go): the root inside the share, the
// server's address, the share id and its code, and whether archives are read by the server.
export const ADDITIONAL: FormItem[] = [
  item('root_folder_path', 'string', { default: '/', required: true }),
  item('url', 'string', { required: true }),
  item('sid', 'string', { required: true }),
  item('pwd', 'string'),
  item('forward_archive_requests', 'bool', { default: 'true' }),
];

export const CONFIG = driverConfig({ name: 'OpenListShare', localSort: true, noUpload: true, defaultRoot: '/' });
