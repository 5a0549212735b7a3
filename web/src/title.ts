// The tab title: the page's own names, then the site title ("Storages | Manage | Atrium", "Photos | Atrium").
import { createEffect, createRoot, createSignal } from 'solid-js';
import { settings } from './state';

const [parts, setParts] = createSignal<string[]>([]);

/** Names the page on screen, most specific first; empty parts are left out. */
export const setPageTitle = (...names: Array<string | undefined>) => setParts(names.filter((n): n is string => !!n));

export const pageTitle = () => [...parts(), settings().site_title || 'Atrium'].join(' | ');

createRoot(() => createEffect(() => (document.title = pageTitle())));
