// Downloading a folder or a selection as one zip the server streams. The browser must save the
// stream itself (a 10 GiB folder cannot pass through a blob), so after a dry run that checks
// access and counts, a form is posted into a hidden frame: the answer is an attachment.
import { api, token } from '../api';
import { basePath } from '../config';
import { formatSize } from '../format';
import { t } from '../i18n';
import { notify, notifyError, passwordFor } from '../state';

const FRAME = 'atrium-download';

export async function downloadArchive(dir: string, names: string[]): Promise<void> {
  const password = passwordFor(dir);
  try {
    const plan = await api<{ files: number; folders: number; size: number }>('/fs/zip', { dir, names, password, dry_run: true });
    notify(t('zip.started', { n: plan.files, size: formatSize(plan.size) }));
  } catch (e) {
    notifyError(e);
    return;
  }
  let frame = document.querySelector<HTMLIFrameElement>(`iframe[name=${FRAME}]`);
  if (!frame) {
    frame = document.createElement('iframe');
    frame.name = FRAME;
    frame.hidden = true;
    document.body.append(frame);
  }
  const form = document.createElement('form');
  form.method = 'POST';
  form.action = `${basePath}/api/fs/zip`;
  form.target = FRAME;
  form.hidden = true;
  for (const [name, value] of Object.entries({ dir, names: JSON.stringify(names), password, token: token.get() })) {
    const input = document.createElement('input');
    input.type = 'hidden';
    input.name = name;
    input.value = value;
    form.append(input);
  }
  document.body.append(form);
  form.submit();
  form.remove();
}
