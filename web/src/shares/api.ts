// Share links (docs/sharing.md): the owner's API and the visitor's links.
import { api, encodePath } from '../api';
import { basePath } from '../config';

export interface Share {
  id: string;
  files: string[];
  expires: string | null;
  pwd: string;
  accessed: number;
  max_accessed: number;
  disabled: boolean;
  remark: string;
  creator: string;
}

export interface ShareForm {
  files: string[];
  expires: string | null;
  pwd: string;
  max_accessed: number;
  remark: string;
}

/** The page a visitor opens: `/@s/<id>` in this web UI. */
export const shareUrl = (id: string) => `${location.origin}${basePath}/@s/${encodeURIComponent(id)}`;

/** A visitor path of the web UI, `/@s/<id>/<inside>`, split into the id and the path inside. */
export function splitVisitorPath(p: string): { id: string; inside: string } {
  const rest = p.replace(/^\/@s\/?/, '');
  const cut = rest.indexOf('/');
  return cut === -1 ? { id: rest, inside: '/' } : { id: rest.slice(0, cut), inside: rest.slice(cut) || '/' };
}

export const visitorApiPath = (id: string, inside: string) => `/@s/${id}${inside === '/' ? '' : inside}`;

export const createShare = (form: ShareForm) => api<Share>('/share/create', form);
export const listShares = () => api<{ content: Share[] | null; total: number }>('/share/list?page=1&per_page=0');
export const setShareDisabled = (id: string, disabled: boolean) => api(`/share/${disabled ? 'disable' : 'enable'}?id=${encodeURIComponent(id)}`, {});
export const deleteShare = (id: string) => api(`/share/delete?id=${encodeURIComponent(id)}`, {});

/** The `/sd` link of a shared file (what `raw_url` of a visitor's get says). */
export const shareDownload = (id: string, inside: string, pwd: string) =>
  `${location.origin}${basePath}/sd/${encodeURIComponent(id)}${inside === '/' ? '' : encodePath(inside)}${pwd ? `?pwd=${encodeURIComponent(pwd)}` : ''}`;
