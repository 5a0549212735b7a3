// Groups (admins; docs/access-and-security.md, groups): bits, roots, a quota and limits that every
// member gains. The list with each group's bits, roots, quota and limits; add and edit in a
// form; delete.
import { For } from 'solid-js';
import type { Group } from '../../api';
import { t } from '../../i18n';
import { limitBody, limitFields, limitsSummary, limitValues, permCount, PermissionBits, quotaSummary, RootsEditor, rootsBody, validatedDialog } from './limits';
import { RecordList } from './RecordList';

/** The group body of the form's values (src/server/routes/admin-groups.ts groupBody), or what is wrong. */
function bodyOf(v: Record<string, string>, id?: number): Record<string, unknown> | string {
  const limits = limitBody(v);
  if (typeof limits === 'string') return limits;
  const roots = rootsBody(v.roots ?? '[]');
  if (typeof roots === 'string') return roots;
  return { ...(id === undefined ? {} : { id }), name: v.name!.trim(), permission: Number(v.permission) || 0, roots, ...limits };
}

const edit = (g?: Group) =>
  validatedDialog(
    g ? `${t('edit')} ${g.name}` : t('groups.add'),
    [{ name: 'name', type: 'string', required: true, label: t('groups.name') }, ...limitFields()],
    { name: g?.name ?? '', permission: String(g?.permission ?? 0), roots: JSON.stringify(g?.roots ?? []), ...limitValues(g) },
    (values, set) => (
      <>
        <RootsEditor value={values.roots ?? '[]'} set={(v) => set('roots', v)} />
        <PermissionBits value={values.permission ?? '0'} set={(v) => set('permission', v)} />
      </>
    ),
    (v) => bodyOf(v, g?.id),
  );

export default function Groups() {
  return (
    <RecordList<Group>
      title={t('m.groups')}
      route="/admin/group"
      columns={[t('groups.name'), t('m.permissions'), t('groups.roots'), t('groups.quota'), t('groups.limits')]}
      cells={(g) => (
        <>
          <td data-testid="group-name">{g.name}</td>
          <td>{permCount(g.permission)}</td>
          <td class="path" data-testid="group-roots">
            <For each={g.roots} fallback={<span class="muted">{t('limits.none')}</span>}>
              {(r) => (
                <div>
                  /{r.name} → {r.path}
                </div>
              )}
            </For>
          </td>
          <td data-testid="group-quota">{quotaSummary(g)}</td>
          <td data-testid="group-limits">{limitsSummary(g)}</td>
        </>
      )}
      name={(g) => g.name}
      edit={edit}
    />
  );
}
