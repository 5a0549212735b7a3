// The storage form's fields and the driver's flags, apart from its implementation: the driver
// registry lists them (admin driver info) without loading the driver (see ../registry.ts).
import { driverConfig, type FormItem, item } from '../types.js';

// OpenList's items, in its order (drivers/smb/meta.go; root_folder_path from driver.RootPath).
export const ADDITIONAL: FormItem[] = [
  item('root_folder_path', 'string', { default: '.', required: true }),
  item('address', 'string', { required: true }),
  item('username', 'string', { required: true }),
  item('password', 'string'),
  item('share_name', 'string', { required: true }),
];

export const CONFIG = driverConfig({ name: 'SMB', localSort: true, onlyProxy: true, noCache: true, defaultRoot: '.' });
