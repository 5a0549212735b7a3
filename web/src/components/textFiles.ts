// Writing a text file from the browser: the same PUT /api/fs/put as an upload.
import { createSignal } from 'solid-js';
import { parentOf, uploadFile } from '../api';
import { extOf } from '../format';
import { navigate } from '../router';
import { passwordFor } from '../state';
import { TYPE } from './icons';

/** Code and plain-text extensions shown (and edited) as text even when the text_types setting omits them. */
export const CODE_EXTS = new Set('ts,mts,cts,jsx,mjs,cjs,css,scss,less,toml,csv,tsv,log,rb,kt,swift,lua,pl,r,dart,svelte,cs,fs,scala,ex,exs,erl,hs,ml,zig,nim,sql,diff,patch,env,cfg,nix,tf,graphql,proto,mk,cmake,gradle'.split(','));
/** Files larger than this are previewed in part and not edited. */
export const TEXT_LIMIT = 2 * 1024 * 1024;

export const isTextFile = (o: { name: string; type: number; is_dir?: boolean }) => !o.is_dir && (o.type === TYPE.TEXT || extOf(o.name) === 'md' || CODE_EXTS.has(extOf(o.name)));

/** The file whose preview shows the editor (set before navigating to it). */
const [editPath, setEditPath] = createSignal<string | undefined>();
export { editPath, setEditPath };
export function openEditor(path: string): void {
  setEditPath(path);
  navigate(path);
}

/** Stores `text` at `path`; without `overwrite` the server refuses an existing file. */
export function saveText(path: string, text: string, overwrite: boolean): Promise<unknown> {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const file = new File([text], name, { type: 'text/plain', lastModified: Date.now() });
  return uploadFile(file, path, { asTask: false, overwrite, password: passwordFor(parentOf(path)) }, () => {}).promise;
}
