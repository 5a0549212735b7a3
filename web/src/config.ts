// What the server injects into index.html (src/server/web.ts).
interface Injected {
  base_path?: string;
  cdn?: string;
  asset_base?: string;
  main_color?: string;
}

declare global {
  interface Window {
    ATRIUM: Injected;
  }
}

const injected: Injected = window.ATRIUM ?? {};

/** The site's base path: '' or '/sub'. Every API call and app link starts with it. */
export const basePath = (injected.base_path ?? '').replace(/\/+$/, '');
export const mainColor = injected.main_color || '#1890ff';
