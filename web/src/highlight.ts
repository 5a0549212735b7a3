// Syntax highlighting, loaded only when a text file is previewed.
import hljs from 'highlight.js/lib/common';

/** Highlighted HTML of `code` (escaped by highlight.js), by file extension or auto-detected. */
export function highlight(code: string, ext: string): string {
  const lang = hljs.getLanguage(ext) ? ext : undefined;
  return lang ? hljs.highlight(code, { language: lang }).value : hljs.highlightAuto(code).value;
}
