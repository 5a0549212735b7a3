// The write operations of the file browser, each a dialog plus one API call.
import { createSignal, For, Show } from 'solid-js';
import { act } from '../actions';
import { api, joinPath, type Obj } from '../api';
import { t } from '../i18n';
import { notify } from '../state';
import { confirmAction, promptText, showDialog } from './Dialog';
import { pickFolder } from './FolderPicker';

const run = (call: () => Promise<unknown>, done: string) => act(call, undefined, done);

export async function mkdir(dir: string): Promise<boolean> {
  const name = await promptText(t('mkdir'), t('mkdir.prompt'));
  if (!name) return false;
  return run(() => api('/fs/mkdir', { path: joinPath(dir, name) }), t('done'));
}

export async function rename(dir: string, obj: Obj): Promise<boolean> {
  const name = await promptText(t('rename'), t('rename.prompt'), obj.name);
  if (!name || name === obj.name) return false;
  return run(() => api('/fs/rename', { path: joinPath(dir, obj.name), name }), t('done'));
}

export async function moveOrCopy(kind: 'move' | 'copy', dir: string, names: string[]): Promise<boolean> {
  const dst = await pickFolder(t(kind === 'move' ? 'move.title' : 'copy.title', { n: names.length }), dir);
  if (dst === undefined || dst === dir) return false;
  return run(() => api(`/fs/${kind}`, { src_dir: dir, dst_dir: dst, names }), t('done'));
}

export async function remove(dir: string, names: string[]): Promise<boolean> {
  if (!(await confirmAction(t('delete'), t('delete.confirm', { n: names.length })))) return false;
  return run(() => api('/fs/remove', { dir, names }), t('done'));
}

/** Regular-expression rename of the selected names, previewed before it is applied. */
export async function batchRename(dir: string, names: string[]): Promise<boolean> {
  const pairs = await showDialog<Array<{ src_name: string; new_name: string }>>(t('batch_rename'), (done) => {
    const [find, setFind] = createSignal('');
    const [replace, setReplace] = createSignal('');
    const preview = () => {
      let re: RegExp;
      try {
        re = new RegExp(find());
      } catch {
        return [];
      }
      if (!find()) return [];
      return names.map((n) => ({ src_name: n, new_name: n.replace(re, replace()) })).filter((p) => p.new_name && p.new_name !== p.src_name);
    };
    return (
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (preview().length) done(preview());
        }}
      >
        <label>
          {t('batch.find')}
          <input name="find" value={find()} onInput={(e) => setFind(e.currentTarget.value)} autocomplete="off" />
        </label>
        <label>
          {t('batch.replace')}
          <input name="replace" value={replace()} onInput={(e) => setReplace(e.currentTarget.value)} autocomplete="off" />
        </label>
        <p class="muted">{t('batch.preview', { n: preview().length })}</p>
        <Show when={preview().length}>
          <ul class="rename-preview">
            <For each={preview().slice(0, 50)}>
              {(p) => (
                <li>
                  {p.src_name} → <strong>{p.new_name}</strong>
                </li>
              )}
            </For>
          </ul>
        </Show>
        <div class="actions">
          <button type="button" onClick={() => done()}>
            {t('cancel')}
          </button>
          <button type="submit" class="primary" disabled={!preview().length}>
            {t('ok')}
          </button>
        </div>
      </form>
    );
  });
  if (!pairs) return false;
  return run(() => api('/fs/batch_rename', { src_dir: dir, rename_objects: pairs }), t('done'));
}

export async function copyText(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const ta = document.createElement('textarea');
    ta.value = text;
    document.body.append(ta);
    ta.select();
    document.execCommand('copy');
    ta.remove();
  }
  notify(t('copied'));
}
