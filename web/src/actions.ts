import { t } from './i18n';
import { notify, notifyError } from './state';

/** Runs one API call for a user action: a toast with the outcome, then `after` on success. */
export async function act(call: () => Promise<unknown>, after?: () => unknown, done = t('done')): Promise<boolean> {
  try {
    await call();
    notify(done);
    await after?.();
    return true;
  } catch (e) {
    notifyError(e);
    return false;
  }
}

/** act() with a busy flag raised while it runs (to disable the button that started it). */
export async function busyAct(setBusy: (b: boolean) => void, call: () => Promise<unknown>, after?: () => unknown): Promise<boolean> {
  setBusy(true);
  try {
    return await act(call, after);
  } finally {
    setBusy(false);
  }
}
