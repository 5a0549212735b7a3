// Picks a destination folder by walking /api/fs/dirs.
import Icon from './Icon';
import { createResource, For, Show } from 'solid-js';
import { createSignal } from 'solid-js';
import { api, joinPath, parentOf } from '../api';
import { t } from '../i18n';
import { passwordFor } from '../state';
import { showDialog } from './Dialog';

export function pickFolder(title: string, start: string): Promise<string | undefined> {
  return showDialog<string>(title, (done) => {
    const [dir, setDir] = createSignal(start);
    const [dirs] = createResource(dir, (p) => api<Array<{ name: string }> | null>('/fs/dirs', { path: p, password: passwordFor(p) }).catch(() => null));
    return (
      <div class="picker">
        <div class="picker-path" data-testid="picker-path">
          {dir()}
        </div>
        <ul class="picker-list">
          <Show when={dir() !== '/'}>
            <li>
              <button class="link" onClick={() => setDir(parentOf(dir()))}>
                <Icon name="up" /> ..
              </button>
            </li>
          </Show>
          <For each={dirs() ?? []}>
            {(d) => (
              <li>
                <button class="link" onClick={() => setDir(joinPath(dir(), d.name))}>
                  <Icon name="folder" /> {d.name}
                </button>
              </li>
            )}
          </For>
        </ul>
        <div class="actions">
          <button type="button" onClick={() => done()}>
            {t('cancel')}
          </button>
          <button type="button" class="primary" onClick={() => done(dir())}>
            {t('pick.here')}
          </button>
        </div>
      </div>
    );
  });
}
