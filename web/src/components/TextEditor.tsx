// A text and code editor (CodeMirror 6, loaded with this chunk only when a file is edited):
// line numbers, undo history, search, the language's highlighting, Ctrl+S / Cmd+S saves.
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import { defaultHighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { highlightSelectionMatches, searchKeymap } from '@codemirror/search';
import { Compartment, EditorState } from '@codemirror/state';
import { EditorView, highlightActiveLine, keymap, lineNumbers } from '@codemirror/view';
import { createSignal, onCleanup, onMount } from 'solid-js';
import { baseName } from '../api';
import { extOf } from '../format';
import { t } from '../i18n';
import { notify, notifyError } from '../state';
import { confirmAction } from './Dialog';
import { saveText } from './textFiles';

async function languageOf(ext: string) {
  switch (ext) {
    case 'js': case 'mjs': case 'cjs': case 'jsx': case 'ts': case 'mts': case 'cts': case 'tsx':
      return (await import('@codemirror/lang-javascript')).javascript({ typescript: ext.includes('ts'), jsx: ext.endsWith('x') });
    case 'md': case 'markdown':
      return (await import('@codemirror/lang-markdown')).markdown();
    case 'json':
      return (await import('@codemirror/lang-json')).json();
    case 'css': case 'scss': case 'less':
      return (await import('@codemirror/lang-css')).css();
    case 'html': case 'htm': case 'xml': case 'vue': case 'svelte':
      return (await import('@codemirror/lang-html')).html();
    case 'py':
      return (await import('@codemirror/lang-python')).python();
    default:
      return undefined;
  }
}

export default function TextEditor(props: { path: string; text: string; onClose: (saved: boolean) => void }) {
  let host!: HTMLDivElement;
  let view: EditorView | undefined;
  const [dirty, setDirty] = createSignal(false);
  const [saving, setSaving] = createSignal(false);
  let savedOnce = false;
  const language = new Compartment();

  const save = async () => {
    if (!view || saving()) return true;
    setSaving(true);
    try {
      await saveText(props.path, view.state.doc.toString(), true);
      setDirty(false);
      savedOnce = true;
      notify(t('editor.saved', { name: baseName(props.path) }));
    } catch (e) {
      notifyError(e);
    } finally {
      setSaving(false);
    }
    return true;
  };
  const close = async () => {
    if (dirty() && !(await confirmAction(t('editor.close'), t('editor.discard')))) return;
    props.onClose(savedOnce);
  };

  onMount(() => {
    view = new EditorView({
      parent: host,
      state: EditorState.create({
        doc: props.text,
        extensions: [
          lineNumbers(),
          history(),
          highlightActiveLine(),
          highlightSelectionMatches(),
          syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
          keymap.of([{ key: 'Mod-s', preventDefault: true, run: () => (void save(), true) }, ...defaultKeymap, ...historyKeymap, ...searchKeymap, indentWithTab]),
          language.of([]),
          EditorView.lineWrapping,
          EditorView.updateListener.of((u) => u.docChanged && setDirty(true)),
          EditorView.contentAttributes.of({ 'aria-label': t('editor.label', { name: baseName(props.path) }) }),
        ],
      }),
    });
    view.focus();
    void languageOf(extOf(props.path)).then((lang) => lang && view?.dispatch({ effects: language.reconfigure(lang) }));
  });
  onCleanup(() => view?.destroy());

  return (
    <div class="text-editor" data-testid="editor">
      <div class="editor-bar">
        <span class="muted">{dirty() ? t('editor.unsaved') : t('editor.clean')}</span>
        <span class="grow" />
        <button type="button" onClick={() => void close()}>
          {t('editor.close')}
        </button>
        <button type="button" class="primary" disabled={saving()} onClick={() => void save()} title="Ctrl+S">
          {t('save')}
        </button>
      </div>
      <div ref={host} class="editor-host" />
    </div>
  );
}
