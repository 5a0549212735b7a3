// Where an account is signed in (docs/access-and-security.md, sessions): web sign-ins, SFTP and
// FTP connections, app passwords in use, each with an End button (not the caller's own, which is
// marked), and one button ending all the others. The profile lists one's own; the users page an
// account's, for admins.
import { createResource, Show } from 'solid-js';
import { act } from '../../actions';
import { api, type Session } from '../../api';
import { confirmAction, showDialog } from '../../components/Dialog';
import { formatDate } from '../../format';
import { type MessageKey, t } from '../../i18n';
import { notify, notifyError } from '../../state';
import { DataTable } from './Table';

const when = (ms: number) => (ms > 0 ? formatDate(new Date(ms).toISOString()) : '') || '—';
const kindName = (k: Session['kind']) => t(`sessions.kind_${k}` as MessageKey);

export function SessionList(props: {
  load: () => Promise<Session[]>;
  end: (s: Session) => Promise<unknown>;
  endAll: () => Promise<{ ended: number }>;
  endAllLabel: string;
  endAllQuestion?: string;
  /** Ask before ending (the default). */
  ask?: boolean;
}) {
  const [list, { refetch }] = createResource(props.load);
  const others = () => (list() ?? []).filter((s) => !s.current && s.kind !== 'app_password').length;
  // inside a dialog (an admin's) a question would replace the dialog: the buttons act at once
  const ask = (title: string, text: string) => (props.ask === false ? Promise.resolve(true) : confirmAction(title, text));
  const end = async (s: Session) => {
    if (await ask(t('sessions.end'), t('sessions.end_question', { kind: kindName(s.kind), device: s.ua || s.ip || s.session_id }))) await act(() => props.end(s), refetch);
  };
  const endAll = async () => {
    if (!(await ask(props.endAllLabel, props.endAllQuestion ?? ''))) return;
    try {
      const { ended } = await props.endAll();
      notify(t('sessions.ended', { n: ended }));
      await refetch();
    } catch (e) {
      notifyError(e);
    }
  };
  return (
    <div class="sessions" data-testid="sessions-list">
      <DataTable columns={[t('sessions.kind'), t('sessions.device'), t('sessions.ip'), t('sessions.started'), t('sessions.last_active'), '']} rows={list()}>
        {(s) => (
          <tr data-testid="session-row" data-kind={s.kind} data-current={String(s.current)}>
            <td>{kindName(s.kind)}</td>
            <td class="session-ua">{s.ua || '—'}</td>
            <td>{s.ip || '—'}</td>
            <td>{when(s.created_at)}</td>
            <td>{when(s.last_active)}</td>
            <td class="actions-cell">
              <Show
                when={!s.current}
                fallback={
                  <span class="badge ok" data-testid="session-current">
                    {t('sessions.this')}
                  </span>
                }
              >
                <button class="small danger" data-action="session-end" onClick={() => void end(s)}>
                  {t('sessions.end')}
                </button>
              </Show>
            </td>
          </tr>
        )}
      </DataTable>
      <div class="actions">
        <button class="danger" data-action="sessions-end-all" disabled={others() === 0} onClick={() => void endAll()}>
          {props.endAllLabel}
        </button>
      </div>
    </div>
  );
}

/** The profile's card: the signed-in user's own sessions. */
export function MySessions() {
  return (
    <div class="card" style={{ 'margin-top': '16px' }} data-testid="sessions">
      <h2>{t('sessions.title')}</h2>
      <p class="muted">{t('sessions.help')}</p>
      <SessionList
        load={() => api<Session[]>('/me/sessions')}
        end={(s) => api('/me/sessions/evict', { session_id: s.session_id })}
        endAll={() => api<{ ended: number }>('/me/sessions/evict', { all: true })}
        endAllLabel={t('sessions.end_all')}
        endAllQuestion={t('sessions.end_all_question')}
      />
    </div>
  );
}

/** An admin's dialog: one user's sessions, to end one or all. */
export function userSessions(u: { id: number; username: string }) {
  return showDialog<void>(t('users.sessions_title', { name: u.username }), () => (
    <SessionList
      load={() => api<Session[]>(`/admin/session/list?user_id=${u.id}`)}
      end={(s) => api('/admin/session/evict', { session_id: s.session_id })}
      endAll={() => api<{ ended: number }>('/admin/session/evict', { user_id: u.id, all: true })}
      endAllLabel={t('users.end_all')}
      ask={false}
    />
  ));
}
