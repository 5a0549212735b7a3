// Markdown to sanitised HTML (readmes, headers, .md previews): scripts, event handlers and
// javascript: URLs never reach the page whatever the author wrote.
import DOMPurify from 'dompurify';
import { marked } from 'marked';

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A' && node.getAttribute('href')?.match(/^https?:/)) {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});

// GFM task lists ("- [x] done") render as checkboxes: the only input kept, always read-only.
DOMPurify.addHook('uponSanitizeElement', (node, data) => {
  if (data.tagName === 'input' && (node as Element).getAttribute('type') !== 'checkbox') node.parentNode?.removeChild(node);
});
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName !== 'INPUT') return;
  for (const a of [...node.attributes]) if (a.name !== 'type' && a.name !== 'checked') node.removeAttribute(a.name);
  node.setAttribute('disabled', '');
  node.setAttribute('class', 'task');
  // named by its item's own text (not a nested list's), else a screen reader reads "checkbox" alone
  const item = node.parentElement?.cloneNode(true) as Element | undefined;
  item?.querySelectorAll('ul, ol').forEach((list) => list.remove());
  const label = item?.textContent?.trim();
  if (label) node.setAttribute('aria-label', label);
  node.parentElement?.classList.add('task-item');
});

export function renderMarkdown(src: string): string {
  const html = marked.parse(src, { async: false, gfm: true }) as string;
  return DOMPurify.sanitize(html, { FORBID_TAGS: ['style', 'form', 'button', 'textarea', 'select'], FORBID_ATTR: ['style'] });
}
