// The bar above a folder's entries: uploads, new folder / text file, offline download (with
// write permission), and the floating bar of what the selection can do.
import { For, Show } from 'solid-js';
import { fileActions } from '../../components/fileActions';
import { mkdir, newTextFile, offlineDownload } from '../../components/fileOps';
import Icon from '../../components/Icon';
import { UploadOptions } from '../../components/UploadPanel';
import { t } from '../../i18n';
import { can } from '../../state';
import { enqueue, filesFromInput } from '../../uploads';
import type { Selection } from './selection';

export default function ActionBar(props: { path: string; canWrite: boolean; names: () => string[]; selection: Selection; after: (ok: boolean) => void }) {
  let fileInput!: HTMLInputElement;
  let folderInput!: HTMLInputElement;
  const chosen = (input: HTMLInputElement) => {
    if (input.files?.length) enqueue(filesFromInput(input.files), props.path);
    input.value = '';
  };
  const sel = props.selection;
  return (
    <div class="actionbar">
      <Show when={props.canWrite}>
        <button onClick={() => fileInput.click()}><Icon name="upload" /> {t('upload.files')}</button>
        <button onClick={() => folderInput.click()}><Icon name="upload" /> {t('upload.folder')}</button>
        <button onClick={() => mkdir(props.path).then(props.after)}><Icon name="plus" /> {t('mkdir')}</button>
        <button onClick={() => newTextFile(props.path, props.names()).then(props.after)}><Icon name="text" /> {t('newfile')}</button>
        <Show when={can(2)}>
          <button onClick={() => offlineDownload(props.path).then(props.after)}><Icon name="upload" /> {t('offline')}</button>
        </Show>
        <UploadOptions />
      </Show>
      <input ref={fileInput} type="file" multiple hidden data-testid="upload-input" onChange={(e) => chosen(e.currentTarget)} />
      <input ref={folderInput} type="file" multiple hidden {...{ webkitdirectory: true }} onChange={(e) => chosen(e.currentTarget)} />
      <span class="grow" />
      <Show when={sel.selected().size > 0}>
        {/* floats at the bottom: a selection never moves the list */}
        <div class="selection-bar" role="toolbar" aria-label={t('actions')}>
          <span class="muted" data-testid="selected-count">
            {t('selected', { n: sel.selected().size })}
          </span>
          <For each={fileActions({ dir: props.path, targets: sel.objs(), after: props.after }).filter((a) => a.id !== 'open')}>
            {(a) => (
              <button classList={{ danger: !!a.danger }} data-action={a.id} onClick={() => void a.run()}>
                {a.label}
              </button>
            )}
          </For>
          <button class="icon" aria-label={t('close')} title={`${t('close')} (Esc)`} onClick={() => sel.clear()}>
            <Icon name="close" />
          </button>
        </div>
      </Show>
    </div>
  );
}
