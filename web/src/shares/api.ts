// Share links (docs/sharing.md): the owner's API and the visitor's links.
import { api, type Share } from '../api';
import { basePath } from '../config';
import { passwordFor, settings } from '../state';
import { renderSummary } from './summary';

export type { Share };

export interface ShareForm {
  /** A custom id (the user's CUSTOM_SHARE_ID bit); empty: a random one. */
  id: string;
  files: string[];
  expires: string | null;
  pwd: string;
  max_accessed: number;
  remark: string;
  /** Markdown shown below the shared entries, and above them. */
  readme: string;
  header: string;
}

/** The page a visitor opens: `/@s/<id>` in this web UI. */
export const shareUrl = (id: string) => `${location.origin}${basePath}/@s/${encodeURIComponent(id)}`;

/** The message copied with a share's link: the `share_summary_content` template filled in, as OpenList's "copy message". */
export const shareMessage = (share: Share) =>
  renderSummary(settings().share_summary_content ?? '', {
    id: share.id,
    files: share.files,
    pwd: share.pwd,
    expires: share.expires,
    creator: share.creator,
    remark: share.remark,
    site_title: settings().site_title ?? '',
    base_url: `${location.origin}${basePath}`,
  });

/** A visitor path of the web UI, `/@s/<id>/<inside>`, split into the id and the path inside. */
export function splitVisitorPath(p: string): { id: string; inside: string } {
  const rest = p.replace(/^\/@s\/?/, '');
  const cut = rest.indexOf('/');
  return cut === -1 ? { id: rest, inside: '/' } : { id: rest.slice(0, cut), inside: rest.slice(cut) || '/' };
}

export const visitorApiPath = (id: string, inside: string) => `/@s/${id}${inside === '/' ? '' : inside}`;

/** The server's answer to a missing or wrong share code (a protected folder answers otherwise). */
export const MSG_WRONG_SHARE_CODE = 'wrong share code';
export const isSharePath = (p: string) => p === '/@s' || p.startsWith('/@s/');

const codeKey = (id: string) => `share-code:${id}`;
export const rememberShareCode = (id: string, code: string) => sessionStorage.setItem(codeKey(id), code);

/**
 * What a visitor sends with every read of a share path (web UI path `/@s/<id>/…`): the share
 * code as `password` (OpenList), and the password of a protected folder they gave on the way.
 */
export function visitorKeys(p: string): { password: string; folder_password: string } {
  const { id } = splitVisitorPath(p);
  return { password: sessionStorage.getItem(codeKey(id)) ?? '', folder_password: passwordFor(p) };
}

export const createShare = (form: ShareForm) => api<Share>('/share/create', form);
export const listShares = () => api<{ content: Share[] | null; total: number }>('/share/list?page=1&per_page=0');
export const setShareDisabled = (id: string, disabled: boolean) => api(`/share/${disabled ? 'disable' : 'enable'}?id=${encodeURIComponent(id)}`, {});
export const deleteShare = (id: string) => api(`/share/delete?id=${encodeURIComponent(id)}`, {});
