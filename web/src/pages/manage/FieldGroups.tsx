// Form fields in fieldsets, in the order their groups first appear.
import { For } from 'solid-js';
import { tx } from '../../i18n';
import Field, { type FieldSpec } from './Field';

export default function FieldGroups(props: { fields: FieldSpec[]; values: Record<string, string>; set: (k: string, v: string) => void; vars?: Record<string, string> }) {
  const groups = () => {
    const out = new Map<string, FieldSpec[]>();
    for (const f of props.fields) {
      const g = f.group ?? 'basics';
      out.set(g, [...(out.get(g) ?? []), f]);
    }
    return [...out];
  };
  return (
    <For each={groups()}>
      {([group, fields]) => (
        <fieldset class="field-group" data-group={group}>
          <legend>{tx(`g.${group}`, props.vars) ?? group}</legend>
          <div class="form-grid">
            <For each={fields}>{(f) => <Field spec={f} value={props.values[f.name] ?? ''} onChange={(v) => props.set(f.name, v)} />}</For>
          </div>
        </fieldset>
      )}
    </For>
  );
}
