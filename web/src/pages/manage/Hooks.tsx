// Event hooks (admins): the rules, their HTTP or command action, and each hook's dead letters with "send again".
import { createResource, For, Show } from 'solid-js';
import { api } from '../../api';
import { showDialog } from '../../components/Dialog';
import { t } from '../../i18n';
import { DataTable } from './Table';
import { bool, recordDialog } from './recordDialog';
import { type ListCall, RecordList } from './RecordList';
import { OPS } from '../../audit-ops';

type Action = { type: 'http'; url: string; secret: string; secret_set?: boolean } | { type: 'command'; command: string[] };

interface Hook {
  id: number;
  name: string;
  events: string[];
  paths: string[];
  users: string[];
  action: Action;
  disabled: boolean;
  pending: number;
  dead: number;
}

interface DeadLetter {
  id: number;
  event: { time: number; op: string; user: string; path: string; dst_path?: string };
  attempts: number;
  last_error: string;
}


const lines = (s: string) => s.split('\n').map((l) => l.trim()).filter(Boolean);

function fields(h?: Hook) {
  return [
    { name: 'name', type: 'string', group: 'hook_rule', required: true, label: t('hooks.name') },
    { name: 'paths', type: 'text', group: 'hook_rule', label: t('hooks.paths'), help: t('hooks.paths_help') },
    { name: 'users', type: 'text', group: 'hook_rule', label: t('hooks.users') },
    { name: 'disabled', type: 'bool', group: 'hook_rule', label: t('hooks.disabled') },
    { name: 'type', type: 'select', group: 'hook_action', options: 'http,command', required: true, label: t('hooks.type') },
    { name: 'url', type: 'string', group: 'hook_action', label: t('hooks.url') },
    { name: 'secret', type: 'string', group: 'hook_action', label: t('hooks.secret'), help: h?.action.type === 'http' && h.action.secret_set ? t('hooks.secret_keep') : t('hooks.secret_help') },
    { name: 'command', type: 'text', group: 'hook_action', label: t('hooks.command') },
  ];
}

async function edit(h?: Hook): Promise<Record<string, unknown> | undefined> {
  const initial = {
    name: h?.name ?? '',
    paths: (h?.paths ?? []).join('\n'),
    users: (h?.users ?? []).join('\n'),
    disabled: String(h?.disabled ?? false),
    type: h?.action.type ?? 'http',
    url: h?.action.type === 'http' ? h.action.url : '',
    secret: '',
    command: h?.action.type === 'command' ? h.action.command.join('\n') : '',
    events: (h?.events ?? ['upload']).join(','),
  };
  const v = await recordDialog(h ? `${t('edit')} ${h.name}` : `${t('add')} ${t('m.hooks')}`, fields(h), initial, (values, set) => {
    const chosen = () => new Set(values.events!.split(',').filter(Boolean));
    const toggle = (op: string, on: boolean) => {
      const s = chosen();
      if (on) s.add(op);
      else s.delete(op);
      set('events', [...s].join(','));
    };
    return (
      <fieldset class="perms hook-events">
        <legend>{t('hooks.events')}</legend>
        <div class="form-grid" role="group" aria-label={t('hooks.events_hint')}>
          <For each={OPS}>
            {(op) => (
              <label>
                <input type="checkbox" name={`event-${op}`} checked={chosen().has(op)} onChange={(e) => toggle(op, e.currentTarget.checked)} /> {op}
              </label>
            )}
          </For>
        </div>
      </fieldset>
    );
  });
  if (!v) return undefined;
  const action = v.type === 'command' ? { type: 'command', command: lines(v.command ?? '') } : { type: 'http', url: v.url, secret: v.secret };
  return { ...(h ? { id: h.id } : {}), name: v.name, events: v.events!.split(',').filter(Boolean), paths: lines(v.paths ?? ''), users: lines(v.users ?? ''), disabled: bool(v.disabled), action };
}

/** A hook's dead letters in a dialog: each can be sent again, or all at once, or purged. */
function deadLetters(h: Hook, call: ListCall) {
  return showDialog(t('hooks.dead_title', { name: h.name }), () => {
    const [letters, { refetch }] = createResource(() => api<{ content: DeadLetter[] | null }>(`/admin/hook/dead?id=${h.id}&page=1&per_page=500`));
    // through the list's call: the hooks' counts are fetched again too
    const run = async (route: string, body: unknown) => {
      await call(route, body);
      await refetch();
    };
    const resend = (ids: number[]) => run('/admin/hook/resend', { ids });
    const all = () => (letters()?.content ?? []).map((l) => l.id);
    return (
      <div class="dead-letters">
        <DataTable columns={[t('hooks.time'), t('hooks.op'), t('hooks.path'), t('hooks.user'), t('hooks.attempts'), t('hooks.error'), '']} rows={letters()?.content ?? []}>
          {(l) => (
            <tr>
              <td>{new Date(l.event.time).toLocaleString()}</td>
              <td>{l.event.op}</td>
              <td>{l.event.dst_path ? `${l.event.path} → ${l.event.dst_path}` : l.event.path}</td>
              <td>{l.event.user}</td>
              <td>{l.attempts}</td>
              <td class="error-text">{l.last_error}</td>
              <td class="actions-cell">
                <button class="small" onClick={() => resend([l.id])}>
                  {t('hooks.send_again')}
                </button>
              </td>
            </tr>
          )}
        </DataTable>
        <Show when={all().length > 0} fallback={<p class="muted">{t('hooks.none_dead')}</p>}>
          <div class="actions">
            <button class="danger" onClick={() => run('/admin/hook/purge', { hook_id: h.id })}>
              {t('hooks.purge')}
            </button>
            <button class="primary" onClick={() => resend(all())}>
              {t('hooks.send_all')}
            </button>
          </div>
        </Show>
      </div>
    );
  });
}

const target = (a: Action) => (a.type === 'http' ? a.url : a.command.join(' '));

export default function Hooks() {
  return (
    <RecordList<Hook>
      title={t('m.hooks')}
      route="/admin/hook"
      columns={[t('hooks.name'), t('hooks.events'), t('hooks.target'), t('m.status'), t('hooks.dead')]}
      cells={(h) => (
        <>
          <td>{h.name}</td>
          <td>{h.events.join(', ')}</td>
          <td>
            <code>{h.action.type}</code> {target(h.action)}
          </td>
          <td>
            <span class="badge" classList={{ ok: !h.disabled, bad: h.disabled }}>
              {h.disabled ? t('m.disabled') : t('m.enabled')}
            </span>
          </td>
          <td>{h.dead}</td>
        </>
      )}
      name={(h) => h.name}
      edit={edit}
      buttons={(h, call) => (
        <button class="small" onClick={() => deadLetters(h, call)}>
          {t('hooks.dead_count', { n: h.dead })}
        </button>
      )}
    />
  );
}
