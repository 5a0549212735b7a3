// Single sign-on in the browser: the provider opens in a popup whose last page posts {token} or
// {sso_id} back to this window (this origin only); in compatibility mode this page goes to the
// provider itself and comes back with ?token= (login) or ?sso_id= (manage) in the address.
import { basePath } from './config';

export type SsoKey = 'token' | 'sso_id';

// Read once at start, and removed from the address bar so they are neither bookmarked nor shared.
const fromUrl: Partial<Record<SsoKey, string>> = {};
{
  const q = new URLSearchParams(location.search);
  let changed = false;
  for (const k of ['token', 'sso_id'] as const) {
    const v = q.get(k);
    if (v) {
      fromUrl[k] = v;
      q.delete(k);
      changed = true;
    }
  }
  if (changed) history.replaceState(null, '', `${location.pathname}${q.size ? `?${q}` : ''}${location.hash}`);
}

/** Whether the provider's redirect left a value (the manage page then opens the profile, which takes it). */
export const pendingFromUrl = (key: SsoKey) => fromUrl[key] !== undefined;

/** A value the provider's redirect left in the address (compatibility mode), taken once. */
export function takeFromUrl(key: SsoKey): string | undefined {
  const v = fromUrl[key];
  delete fromUrl[key];
  return v;
}

/**
 * Starts single sign-on: `sso_get_token` signs in, `get_sso_id` binds the identity to this account.
 * `onValue` gets what the popup posts, `onError` the reason it failed; returns false when the popup was blocked.
 */
export function startSso(method: 'sso_get_token' | 'get_sso_id', compatibility: boolean, onValue: (v: string) => void, onError: (reason: string) => void): boolean {
  const url = `${basePath}/api/auth/sso?method=${method}`;
  if (compatibility) {
    location.href = url;
    return true;
  }
  const key: SsoKey = method === 'sso_get_token' ? 'token' : 'sso_id';
  const popup = window.open(url, 'authPopup', 'width=500,height=600');
  if (!popup) return false;
  const listener = (e: MessageEvent) => {
    if (e.origin !== location.origin || e.source !== popup) return;
    const data = e.data as Record<string, unknown> | null;
    const v = data?.[key];
    // The provider's window shows why it failed, and tells us.
    const failed = data?.sso_error;
    if (typeof failed === 'string' && failed !== '') {
      window.removeEventListener('message', listener);
      onError(failed);
      return;
    }
    if (typeof v !== 'string' || v === '') return;
    window.removeEventListener('message', listener);
    onValue(v);
  };
  window.addEventListener('message', listener);
  return true;
}
