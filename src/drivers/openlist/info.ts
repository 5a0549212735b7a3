// The storage form's fields and the driver's flags, apart from its implementation: the driver
// registry lists them (admin driver info) without loading the driver (see ../registry.ts).
import { driverConfig, type FormItem, item } from '../types.js';
import { ADDITIONAL as ALIST_ITEMS } from '../alist-v3/info.js';

// OpenList's items, in its order (drivers/openlist/meta.go): AList V3's plus four switches.
export const ADDITIONAL: FormItem[] = [
  ...ALIST_ITEMS,
  item('pass_ip_to_upsteam', 'bool', { default: 'true' }),
  item('pass_ua_to_upsteam', 'bool', { default: 'true' }),
  item('forward_archive_requests', 'bool', { default: 'true' }),
  // (sic: OpenList's spelling) a client's refresh also refreshes the peer's listing cache
  item('pass_refresh_flag_to_upsteam', 'bool', { default: 'false' }),
];

export const CONFIG = driverConfig({ name: 'OpenList', localSort: true, checkStatus: true, proxyRangeOption: true, defaultRoot: '/' });
