// The write operations of the file browser, each a dialog plus one API call.
import { createSignal, For, Show } from 'solid-js';
import { act } from '../actions';
import { api, joinPath, type Obj } from '../api';
import { t } from '../i18n';
import { notify, notifyError, passwordFor } from '../state';
import { confirmAction, promptText, showDialog } from './Dialog';
import { pickFolder } from './FolderPicker';
import OfflineForm from './OfflineForm';
import { openEditor, saveText } from './textFiles';

const run = (call: () => Promise<unknown>, done: string) => act(call, undefined, done);

export async function mkdir(dir: string): Promise<boolean> {
  const name = await promptText(t('mkdir'), t('mkdir.prompt'));
  if (!name) return false;
  return run(() => api('/fs/mkdir', { path: joinPath(dir, name), password: passwordFor(dir) }), t('done.mkdir', { name }));
}

/** A new empty text file, then its editor; an existing name is refused, never replaced. */
export async function newTextFile(dir: string, existing: string[]): Promise<boolean> {
  const name = await promptText(t('newfile'), t('newfile.prompt'), 'new.txt');
  if (!name) return false;
  if (existing.includes(name)) {
    notifyError(new Error(t('exists', { name })));
    return false;
  }
  const path = joinPath(dir, name);
  const ok = await run(() => saveText(path, '', false), t('done.newfile', { name }));
  if (ok) openEditor(path);
  return ok;
}

/** Offline download straight into the folder one is in. */
export async function offlineDownload(dir: string): Promise<boolean> {
  const started = await showDialog<string[]>(t('offline.title', { dir }), (done) => <OfflineForm dest={dir} onDone={(urls) => done(urls)} onCancel={() => done()} />);
  return !!started;
}

export async function rename(dir: string, obj: Obj): Promise<boolean> {
  const name = await promptText(t('rename'), t('rename.prompt'), obj.name);
  if (!name || name === obj.name) return false;
  return run(() => api('/fs/rename', { path: joinPath(dir, obj.name), name, password: passwordFor(dir) }), t('done.rename', { from: obj.name, to: name }));
}

/** What a move or copy does with a name already at the destination: refuse (nothing changes), or OpenList's three choices. */
type Conflict = 'stop' | 'overwrite' | 'skip' | 'merge';
const CONFLICT_LABEL = { stop: 'conflict.stop', overwrite: 'conflict.overwrite', skip: 'conflict.skip', merge: 'conflict.merge' } as const;

/** The radio group under the folder tree. */
function ConflictChoice(props: { choices: readonly Conflict[]; value: Conflict; onChange: (c: Conflict) => void }) {
  return (
    <fieldset class="conflict-choice">
      <legend>{t('conflict.legend')}</legend>
      <For each={props.choices}>
        {(c) => (
          <label>
            <input type="radio" name="conflict" value={c} checked={props.value === c} onChange={() => props.onChange(c)} /> {t(CONFLICT_LABEL[c])}
          </label>
        )}
      </For>
    </fieldset>
  );
}

/** The body fields of a choice: `overwrite`, `skip_existing`, `merge` (copy only, as the server takes it). */
const conflictFields = (c: Conflict) => (c === 'overwrite' ? { overwrite: true } : c === 'skip' ? { skip_existing: true } : c === 'merge' ? { merge: true } : {});

export async function moveOrCopy(kind: 'move' | 'copy', dir: string, names: string[]): Promise<boolean> {
  const [choice, setChoice] = createSignal<Conflict>('stop');
  const choices: Conflict[] = kind === 'copy' ? ['stop', 'overwrite', 'skip', 'merge'] : ['stop', 'overwrite', 'skip'];
  const dst = await pickFolder(t(kind === 'move' ? 'move.title' : 'copy.title', { n: names.length }), dir, () => <ConflictChoice choices={choices} value={choice()} onChange={setChoice} />);
  if (dst === undefined || dst === dir) return false;
  const body = { src_dir: dir, dst_dir: dst, names, password: passwordFor(dir), dst_password: passwordFor(dst), ...conflictFields(choice()) };
  return run(() => api(`/fs/${kind}`, body), t(kind === 'move' ? 'done.move' : 'done.copy', { n: names.length, dst }));
}

/** Every file below a folder moved flat into another folder (OpenList's recursive move), with `conflict_policy`. */
export async function recursiveMove(dir: string, folder: string): Promise<boolean> {
  const [choice, setChoice] = createSignal<Conflict>('stop');
  const src = joinPath(dir, folder);
  const dst = await pickFolder(t('rmove.title', { name: folder }), dir, () => (
    <>
      <p class="help">{t('rmove.hint')}</p>
      <ConflictChoice choices={['stop', 'overwrite', 'skip']} value={choice()} onChange={setChoice} />
    </>
  ));
  if (dst === undefined || dst === src) return false;
  const policy = choice() === 'stop' ? 'cancel' : choice();
  return run(() => api('/fs/recursive_move', { src_dir: src, dst_dir: dst, conflict_policy: policy, password: passwordFor(src), dst_password: passwordFor(dst) }), t('done.rmove', { name: folder, dst }));
}

export async function remove(dir: string, names: string[]): Promise<boolean> {
  if (!(await confirmAction(t('delete'), t('delete.confirm', { n: names.length })))) return false;
  return run(() => api('/fs/remove', { dir, names, password: passwordFor(dir) }), t('done.delete', { n: names.length }));
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
  return run(() => api('/fs/batch_rename', { src_dir: dir, rename_objects: pairs, password: passwordFor(dir) }), t('done.batch_rename', { n: pairs.length }));
}

export async function copyText(text: string, done = t('copied')): Promise<void> {
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
  notify(done);
}
