import { type DriverConfig, type DriverFactory, type FormItem, item } from './types.js';

/** A driver whose downloads must go through this server (no redirect possible). */
export const mustProxy = (c: DriverConfig): boolean => c.onlyProxy || c.onlyLocal;

/** The `common` form items of a driver, in the original's order (wire-api.md §10.4). */
export function commonItems(c: DriverConfig): FormItem[] {
  const items: FormItem[] = [
    item('mount_path', 'string', { required: true, help: 'The path you want to mount to, it is unique and cannot be repeated' }),
    item('order', 'number', { help: 'use to sort' }),
    item('remark', 'text'),
  ];
  if (!c.noCache) items.push(item('cache_expiration', 'number', { default: '30', required: true, help: 'The cache expiration time for this storage' }));
  if (mustProxy(c)) {
    items.push(item('webdav_policy', 'select', { options: 'use_proxy_url,native_proxy', default: 'native_proxy', required: true }));
  } else {
    items.push(item('web_proxy', 'bool'));
    items.push(item('webdav_policy', 'select', { options: '302_redirect,use_proxy_url,native_proxy', default: '302_redirect', required: true }));
  }
  if (c.proxyRangeOption) items.push(item('proxy_range', 'bool', { help: 'Need to enable proxy' }));
  items.push(item('down_proxy_url', 'text'));
  if (c.localSort) {
    items.push(item('order_by', 'select', { options: 'name,size,modified' }));
    items.push(item('order_direction', 'select', { options: 'asc,desc' }));
  }
  items.push(item('extract_folder', 'select', { options: 'front,back' }));
  items.push(item('enable_sign', 'bool', { default: 'false', required: true }));
  return items;
}

/** `additional` items with the driver's default root applied to root_folder_path/id. */
export function additionalItems(f: DriverFactory): FormItem[] {
  return f.additional.map((it) => {
    if (it.name !== 'root_folder_path' && it.name !== 'root_folder_id') return it;
    const def = it.default || f.config.defaultRoot;
    return { ...it, default: def, required: def !== '' };
  });
}

export function configJson(c: DriverConfig) {
  return {
    name: c.name,
    local_sort: c.localSort,
    only_local: c.onlyLocal,
    only_proxy: c.onlyProxy,
    no_cache: c.noCache,
    no_upload: c.noUpload,
    need_ms: c.needMs,
    default_root: c.defaultRoot,
    alert: c.alert,
  };
}

export function driverInfo(f: DriverFactory) {
  return { common: commonItems(f.config), additional: additionalItems(f), config: configJson(f.config) };
}
