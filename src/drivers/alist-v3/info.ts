// The storage form's fields and the driver's flags, apart from its implementation: the driver
// registry lists them (admin driver info) without loading the driver (see ../registry.ts).
import { driverConfig, type FormItem, item } from '../types.js';

export const ADDITIONAL: FormItem[] = [
  item('root_folder_path', 'string', { default: '/', required: true }),
  item('url', 'string', { required: true }),
  item('meta_password', 'string'),
  item('username', 'string'),
  item('password', 'string'),
  item('token', 'string'),
];

export const CONFIG = driverConfig({ name: 'AList V3', localSort: true, checkStatus: true, proxyRangeOption: true, defaultRoot: '/' });
