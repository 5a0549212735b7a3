// The storage form's fields and the driver's flags, apart from its implementation: the driver
// registry lists them (admin driver info) without loading the driver (see ../registry.ts).
import { driverConfig, type FormItem, item } from '../types.js';

export const ADDITIONAL: FormItem[] = [
  item('paths', 'text', { required: true }),
  item('protect_same_name', 'bool', { default: 'true', required: false, help: 'Protects same-name files from Delete or Rename' }),
];

export const CONFIG = driverConfig({ name: 'Alias', localSort: true, noCache: true, proxyRangeOption: true, defaultRoot: '/' });
