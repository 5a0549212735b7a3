// Path rules (admins): password, write, hide, readme and header of a path and below, for everyone
// or for the members of one group (docs/access-and-security.md).
import { createResource, For } from 'solid-js';
import { api, type Group, type Meta } from '../../api';
import { t } from '../../i18n';
import { recordDialog } from './recordDialog';
import { RecordList } from './RecordList';

const FIELDS = [
  { name: 'path', type: 'string', group: 'access', required: true },
  { name: 'password', type: 'string', group: 'access' },
  { name: 'p_sub', type: 'bool', group: 'access', label: t('m.password_applies_to_sub_folders') },
  { name: 'write', type: 'bool', group: 'write', label: t('m.allow_uploads_and_new_folders') },
  { name: 'w_sub', type: 'bool', group: 'write', label: t('m.write_applies_to_sub_folders') },
  { name: 'hide', type: 'text', group: 'hide', help: t('m.one_regular_expression_per_line_matched_') },
  { name: 'h_sub', type: 'bool', group: 'hide', label: t('m.hide_applies_to_sub_folders') },
  { name: 'readme', type: 'text', group: 'texts', help: t('m.markdown_shown_below_the_listing') },
  { name: 'r_sub', type: 'bool', group: 'texts', label: t('m.readme_applies_to_sub_folders') },
  { name: 'header', type: 'text', group: 'texts', help: t('m.markdown_shown_above_the_listing') },
  { name: 'header_sub', type: 'bool', group: 'texts', label: t('m.header_applies_to_sub_folders') },
];
const BOOLS = new Set(FIELDS.filter((f) => f.type === 'bool').map((f) => f.name));

const loadGroups = () => api<{ content: Group[] | null }>('/admin/group/list?page=1&per_page=1000').then((r) => r.content ?? [], () => [] as Group[]);

/** Whom the rule is for, over the form value `group_id` (0: everyone). */
function Audience(props: { groups: Group[]; value: string; set: (v: string) => void }) {
  return (
    <div class="field">
      <label for="f-group_id">
        {t('metas.group')}
        <select id="f-group_id" name="group_id" value={props.value} aria-describedby="f-group_id-help" onChange={(e) => props.set(e.currentTarget.value)}>
          <option value="0">{t('metas.everyone')}</option>
          <For each={props.groups}>{(g) => <option value={String(g.id)}>{g.name}</option>}</For>
        </select>
      </label>
      <div class="help" id="f-group_id-help">
        {t('metas.group_help')}
      </div>
    </div>
  );
}

export default function Metas() {
  const [groups] = createResource(loadGroups);
  const audience = (m: Meta) => (m.group_id ? (groups()?.find((g) => g.id === m.group_id)?.name ?? `#${m.group_id}`) : t('metas.everyone'));
  const edit = async (m?: Meta) => {
    const all = await loadGroups();
    const initial = { ...Object.fromEntries(FIELDS.map((f) => [f.name, String((m as unknown as Record<string, unknown>)?.[f.name] ?? (BOOLS.has(f.name) ? 'false' : f.name === 'path' ? '/' : ''))])), group_id: String(m?.group_id ?? 0) };
    const v = await recordDialog(m ? `${t('edit')} ${m.path}` : `${t('add')} meta`, FIELDS, initial, (values, set) => <Audience groups={all} value={values.group_id ?? '0'} set={(x) => set('group_id', x)} />);
    if (!v) return undefined;
    const body: Record<string, unknown> = { ...(m ?? {}), group_id: Number(v.group_id) || 0 };
    for (const f of FIELDS) body[f.name] = BOOLS.has(f.name) ? v[f.name] === 'true' : v[f.name];
    return body;
  };
  return (
    <RecordList<Meta>
      title={t('m.metas')}
      route="/admin/meta"
      columns={[t('m.path'), t('metas.group'), t('login.password'), t('m.write'), t('m.hide')]}
      cells={(m) => (
        <>
          <td>{m.path}</td>
          <td data-testid="meta-group">{audience(m)}</td>
          <td>{m.password ? '••••' : ''}</td>
          <td>{m.write ? '✓' : ''}</td>
          <td>{m.hide.split('\n').filter(Boolean).length || ''}</td>
        </>
      )}
      name={(m) => m.path}
      edit={edit}
    />
  );
}
