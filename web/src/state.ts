// Session-wide state: public settings, the current user, notifications, theme.
import { createSignal } from 'solid-js';
import { api, token, type User } from './api';

const [settings, setSettings] = createSignal<Record<string, string>>({});
const [me, setMe] = createSignal<User | undefined>();
export { settings, me };

/** The folder on screen (a previewed file's parent): where the header's search looks. */
const [currentFolder, setCurrentFolder] = createSignal('/');
export { currentFolder, setCurrentFolder };

export const isAdmin = () => me()?.role === 2;
export const isGuest = () => !me() || me()?.role === 1;
/** Permission bit of the current user (the admin holds all). */
export const can = (bit: number) => isAdmin() || ((me()?.permission ?? 0) >> bit) & 1;

export async function loadSettings(): Promise<void> {
  setSettings(await api<Record<string, string>>('/public/settings'));
}

/** Who we are: the logged-in user, the guest when allowed, or undefined (login needed). */
export async function loadMe(): Promise<User | undefined> {
  try {
    setMe(await api<User>('/me'));
  } catch {
    setMe(undefined);
  }
  return me();
}

export async function logout(): Promise<void> {
  try {
    if (token.get()) await api('/auth/logout');
  } catch {
    /* the session may already be gone */
  }
  token.set('');
  setMe(undefined);
}

export interface Toast {
  id: number;
  kind: 'ok' | 'error';
  text: string;
}
const [toasts, setToasts] = createSignal<Toast[]>([]);
export { toasts };
let nextToast = 1;
export function notify(text: string, kind: Toast['kind'] = 'ok'): void {
  const id = nextToast++;
  setToasts((l) => [...l, { id, kind, text }]);
  setTimeout(() => setToasts((l) => l.filter((x) => x.id !== id)), kind === 'error' ? 6000 : 3000);
}
export const notifyError = (e: unknown) => notify(e instanceof Error ? e.message : String(e), 'error');

const THEME_KEY = 'theme';
const [dark, setDark] = createSignal(
  localStorage.getItem(THEME_KEY) ? localStorage.getItem(THEME_KEY) === 'dark' : matchMedia('(prefers-color-scheme: dark)').matches,
);
export { dark };
export function toggleDark(): void {
  setDark(!dark());
  localStorage.setItem(THEME_KEY, dark() ? 'dark' : 'light');
}

/** Folder passwords the user typed this session, by path (sent with reads and writes below it). */
const passwords = new Map<string, string>(Object.entries(JSON.parse(sessionStorage.getItem('pw') ?? '{}')));
export function passwordFor(p: string): string {
  for (let cur = p; ; cur = cur.replace(/\/[^/]*$/, '') || '/') {
    const pw = passwords.get(cur);
    if (pw !== undefined) return pw;
    if (cur === '/') return '';
  }
}
export function rememberPassword(p: string, pw: string): void {
  passwords.set(p, pw);
  sessionStorage.setItem('pw', JSON.stringify(Object.fromEntries(passwords)));
}
