// The storage form's fields and the driver's flags, apart from its implementation: the driver
// registry lists them (admin driver info) without loading the driver (see ../registry.ts).
import { driverConfig, type FormItem, item } from '../types.js';

export const ADDITIONAL: FormItem[] = [
  item('address', 'string', { required: true }),
  item('encoding', 'string', { required: true }),
  item('username', 'string', { required: true }),
  item('password', 'string', { required: true }),
  item('root_folder_path', 'string', { default: '/', required: true }),
  // OpenList #2621: CWD into the folder, then list it, for servers that cannot list a path given to LIST
  item('cwd_list', 'bool', { default: 'false', help: 'Change into a folder before listing it (for servers that do not support LIST with a path)' }),
];

export const CONFIG = driverConfig({ name: 'FTP', localSort: true, onlyLocal: true, defaultRoot: '/' });
