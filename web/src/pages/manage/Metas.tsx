import type { Meta } from '../../api';
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

export default function Metas() {
  const edit = async (m?: Meta) => {
    const initial = Object.fromEntries(FIELDS.map((f) => [f.name, String((m as unknown as Record<string, unknown>)?.[f.name] ?? (BOOLS.has(f.name) ? 'false' : f.name === 'path' ? '/' : ''))]));
    const v = await recordDialog(m ? `${t('edit')} ${m.path}` : `${t('add')} meta`, FIELDS, initial);
    if (!v) return undefined;
    const body: Record<string, unknown> = { ...(m ?? {}) };
    for (const f of FIELDS) body[f.name] = BOOLS.has(f.name) ? v[f.name] === 'true' : v[f.name];
    return body;
  };
  return (
    <RecordList<Meta>
      title={t('m.metas')}
      route="/admin/meta"
      columns={[t('m.path'), t('login.password'), t('m.write'), t('m.hide')]}
      cells={(m) => (
        <>
          <td>{m.path}</td>
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
