import { createResource, Show } from 'solid-js';

/** Renders markdown as sanitised HTML; the renderer is loaded on first use. */
export default function Markdown(props: { source: string; class?: string }) {
  const [html] = createResource(
    () => props.source,
    async (src) => (await import('../markdown-render')).renderMarkdown(src),
  );
  return (
    <Show when={html()}>
      <div class={`markdown ${props.class ?? ''}`} innerHTML={html()} />
    </Show>
  );
}
