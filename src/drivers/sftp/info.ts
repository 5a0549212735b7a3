// The storage form's fields and the driver's flags, apart from its implementation: the driver
// registry lists them (admin driver info) without loading the driver (see ../registry.ts).
import { driverConfig, type FormItem, item } from '../types.js';

export const ADDITIONAL: FormItem[] = [
  item('address', 'string', { required: true }),
  item('username', 'string', { required: true }),
  item('private_key', 'text'),
  item('password', 'string'),
  item('passphrase', 'string'),
  item('root_folder_path', 'string', { default: '/', required: true }),
  item('ignore_symlink_error', 'bool', { default: 'false', help: 'Ignore symlink error' }),
];

export const CONFIG = driverConfig({ name: 'SFTP', localSort: true, onlyLocal: true, checkStatus: true, defaultRoot: '/' });
