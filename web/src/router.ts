// A tiny history router: the app's path is location.pathname without the base path, decoded.
import { createSignal } from 'solid-js';
import { basePath } from './config';

function current(): string {
  let p = location.pathname;
  if (basePath && p.startsWith(basePath)) p = p.slice(basePath.length);
  try {
    p = decodeURIComponent(p);
  } catch {
    /* keep the raw form */
  }
  return p.replace(/\/+$/, '') || '/';
}

const [path, setPath] = createSignal(current());
export { path };

/** The URL of an app path (for hrefs): segments percent-encoded, '@' kept for /@login, /@manage. */
export const href = (appPath: string) => `${basePath}${appPath.split('/').map((s) => encodeURIComponent(s).replace(/^%40/, '@')).join('/')}`;

export function navigate(appPath: string, replace = false): void {
  const url = href(appPath);
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  setPath(current());
  window.scrollTo(0, 0);
}

window.addEventListener('popstate', () => setPath(current()));

/** Click handler for <a href>: navigates inside the app unless a modifier asks for a new tab. */
export function linkClick(e: MouseEvent, appPath: string): void {
  if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  e.preventDefault();
  navigate(appPath);
}
