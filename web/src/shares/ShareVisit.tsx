// The visitor's page of a share link, `/@s/<id>/<inside>`: the share code prompt, the shared
// folder's entries, and a shared file's preview (when `share_preview` is on) or download.
import { createResource, createSignal, For, Match, Show, Switch } from 'solid-js';
import { api, ApiError, type GetResp, joinPath, type ListResp, parentOf } from '../api';
import Icon from '../components/Icon';
import { iconOf } from '../components/icons';
import Markdown from '../components/Markdown';
import Preview from '../components/Preview';
import { formatDate, formatSize } from '../format';
import { t } from '../i18n';
import { href, linkClick } from '../router';
import { settings } from '../state';
import { splitVisitorPath, visitorApiPath } from './api';

const WRONG_CODE = 403;
const codeKey = (id: string) => `share-code:${id}`;

type Loaded = { kind: 'folder'; list: ListResp } | { kind: 'file'; obj: GetResp; siblings: ListResp['content'] } | { kind: 'code'; wrong: boolean };

export default function ShareVisit(props: { path: string }) {
  const where = () => splitVisitorPath(props.path);
  const [code, setCode] = createSignal(sessionStorage.getItem(codeKey(where().id)) ?? '');

  const load = async ([p, pwd]: [string, string]): Promise<Loaded> => {
    const { id, inside } = splitVisitorPath(p);
    const path = visitorApiPath(id, inside);
    try {
      const obj = await api<GetResp>('/fs/get', { path, password: pwd });
      if (!obj.is_dir) {
        const siblings = inside === '/' ? [] : ((await api<ListResp>('/fs/list', { path: visitorApiPath(id, parentOf(inside)), password: pwd }).catch(() => undefined))?.content ?? []);
        return { kind: 'file', obj, siblings };
      }
      return { kind: 'folder', list: await api<ListResp>('/fs/list', { path, password: pwd }) };
    } catch (e) {
      if (e instanceof ApiError && e.code === WRONG_CODE) return { kind: 'code', wrong: pwd !== '' };
      throw e;
    }
  };
  const [data] = createResource(() => [props.path, code()] as [string, string], load);

  const submitCode = (e: SubmitEvent) => {
    e.preventDefault();
    const value = new FormData(e.currentTarget as HTMLFormElement).get('code')?.toString() ?? '';
    sessionStorage.setItem(codeKey(where().id), value);
    setCode(value);
  };
  const appPath = (name: string) => joinPath(props.path, name);

  return (
    <main class="container share-visit">
      <h2 class="muted">{t('share.shared_by')}</h2>
      <Show when={!data.error} fallback={<p class="error" role="alert">{t('share.unavailable')}: {String((data.error as Error)?.message ?? '')}</p>}>
        <Show when={data()} fallback={<p class="muted center">{t('loading')}</p>}>
          {(d) => (
            <Switch>
              <Match when={d().kind === 'code' && (d() as { wrong: boolean })}>
                {(c) => (
                  <form class="card narrow" onSubmit={submitCode}>
                    <h2>{t('share.code_title')}</h2>
                    <p class="muted">{t('share.code_hint')}</p>
                    <input type="password" name="code" aria-label={t('share.password')} autofocus />
                    <Show when={c().wrong}>
                      <p class="error" role="alert">{t('password.wrong')}</p>
                    </Show>
                    <div class="actions">
                      <button type="submit" class="primary">{t('password.submit')}</button>
                    </div>
                  </form>
                )}
              </Match>
              <Match when={d().kind === 'file' && (d() as Extract<Loaded, { kind: 'file' }>)}>
                {(f) => (
                  <Show
                    when={settings().share_preview === 'true'}
                    fallback={
                      <p>
                        <Icon name={iconOf(f().obj)} /> {f().obj.name} ({formatSize(f().obj.size)}){' '}
                        <a class="button primary" href={f().obj.raw_url} download={f().obj.name} data-testid="share-download">
                          {t('download')}
                        </a>
                      </p>
                    }
                  >
                    <Preview path={props.path} obj={f().obj} siblings={f().siblings ?? []} />
                  </Show>
                )}
              </Match>
              <Match when={d().kind === 'folder' && (d() as Extract<Loaded, { kind: 'folder' }>)}>
                {(f) => (
                  <>
                    <Show when={f().list.header}>
                      <Markdown source={f().list.header} />
                    </Show>
                    <Show when={(f().list.content ?? []).length > 0} fallback={<p class="empty muted">{t('empty')}</p>}>
                      <table class="files" data-testid="share-list">
                        <thead>
                          <tr>
                            <th>{t('col.name')}</th>
                            <th>{t('col.size')}</th>
                            <th>{t('col.modified')}</th>
                          </tr>
                        </thead>
                        <tbody>
                          <For each={f().list.content ?? []}>
                            {(o) => (
                              <tr>
                                <td>
                                  <a href={href(appPath(o.name))} onClick={(e) => linkClick(e, appPath(o.name))}>
                                    <Icon name={iconOf(o)} /> {o.name}
                                  </a>
                                </td>
                                <td>{o.is_dir ? '' : formatSize(o.size)}</td>
                                <td>{formatDate(o.modified)}</td>
                              </tr>
                            )}
                          </For>
                        </tbody>
                      </table>
                    </Show>
                    <Show when={f().list.readme}>
                      <Markdown source={f().list.readme} class="readme" />
                    </Show>
                  </>
                )}
              </Match>
            </Switch>
          )}
        </Show>
      </Show>
    </main>
  );
}
