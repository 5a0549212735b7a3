// One form field for the server's item descriptions: driver form items (driver/info) and
// setting items share {name|key, type, options, help, required}.
import { For, Match, onMount, Show, Switch } from 'solid-js';
import { fieldHelp, fieldLabel, optionLabel } from '../../fieldText';

export interface FieldSpec {
  name: string;
  type: string;
  options?: string;
  help?: string;
  required?: boolean;
  label?: string;
  /** The fieldset the field is shown in (a key of the g. dictionary entries). */
  group?: string;
}

export default function Field(props: { spec: FieldSpec; value: string; onChange: (v: string) => void }) {
  const label = () => props.spec.label ?? fieldLabel(props.spec.name);
  const help = () => fieldHelp(props.spec.name, props.spec.help);
  const id = () => `f-${props.spec.name}`;
  const options = () => {
    const opts = (props.spec.options ?? '').split(',');
    return props.spec.required || opts.includes('') ? opts : ['', ...opts];
  };
  // a required select starts on its first option, as the browser shows it
  onMount(() => {
    if (props.spec.type === 'select' && props.spec.required && !props.value) props.onChange(options()[0] ?? '');
  });
  return (
    <div class="field" classList={{ wide: props.spec.type === 'text' }}>
      <Switch
        fallback={
          <label for={id()}>
            {label()}
            {props.spec.required ? ' *' : ''}
            <input
              id={id()}
              name={props.spec.name}
              type={props.spec.type === 'number' ? 'number' : 'text'}
              value={props.value}
              required={props.spec.required}
              aria-describedby={help() ? `${id()}-help` : undefined}
              onInput={(e) => props.onChange(e.currentTarget.value)}
            />
          </label>
        }
      >
        <Match when={props.spec.type === 'bool'}>
          <label>
            <input id={id()} name={props.spec.name} type="checkbox" checked={props.value === 'true'} aria-describedby={help() ? `${id()}-help` : undefined} onChange={(e) => props.onChange(String(e.currentTarget.checked))} />{' '}
            {label()}
          </label>
        </Match>
        <Match when={props.spec.type === 'select'}>
          <label for={id()}>
            {label()}
            {props.spec.required ? ' *' : ''}
            <select id={id()} name={props.spec.name} value={props.value} aria-describedby={help() ? `${id()}-help` : undefined} onChange={(e) => props.onChange(e.currentTarget.value)}>
              <For each={options()}>{(o) => <option value={o}>{optionLabel(o)}</option>}</For>
            </select>
          </label>
        </Match>
        <Match when={props.spec.type === 'text'}>
          <label for={id()}>
            {label()}
            {props.spec.required ? ' *' : ''}
            <textarea id={id()} name={props.spec.name} value={props.value} aria-describedby={help() ? `${id()}-help` : undefined} onInput={(e) => props.onChange(e.currentTarget.value)} />
          </label>
        </Match>
      </Switch>
      <Show when={help()}>
        <div class="help" id={`${id()}-help`}>
          {help()}
        </div>
      </Show>
    </div>
  );
}
