import { createSignal, onMount, Show } from 'solid-js';
import { api, ApiError, hashPassword, token } from '../api';
import { t } from '../i18n';
import { navigate } from '../router';
import { loadMe, settings } from '../state';
import { startSso, takeFromUrl } from '../sso';
import { passkeysSupported, signInWithPasskey } from '../passkeys';

const OTP_NEEDED = 402;

export default function Login(props: { guestAllowed: boolean }) {
  const [needOtp, setNeedOtp] = createSignal(false);
  const [error, setError] = createSignal('');
  const [busy, setBusy] = createSignal(false);
  let user!: HTMLInputElement;
  let pass!: HTMLInputElement;
  let otp: HTMLInputElement | undefined;
  let ldap: HTMLInputElement | undefined;
  onMount(() => {
    user.focus();
    // Back from the provider in compatibility mode.
    const fromProvider = takeFromUrl('token');
    if (fromProvider) void signedIn(fromProvider);
  });

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    try {
      await signedIn(await passwordLogin(user.value, pass.value, otp?.value ?? '', ldap?.checked ?? false));
    } catch (err) {
      if (err instanceof ApiError && err.code === OTP_NEEDED) {
        setNeedOtp(true);
        queueMicrotask(() => otp?.focus());
      } else setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="login">
      <form class="card narrow" onSubmit={submit}>
        <h1>{t('login.title', { site: settings().site_title || 'Atrium' })}</h1>
        <label>
          {t('login.username')}
          <input ref={user} name="username" autocomplete="username" required />
        </label>
        <label>
          {t('login.password')}
          <input ref={pass} name="password" type="password" autocomplete="current-password" />
        </label>
        <Show when={settings().ldap_login_enabled === 'true'}>
          <label>
            <input ref={ldap} name="ldap" type="checkbox" /> {settings().ldap_login_tips || t('login.ldap')}
          </label>
        </Show>
        <Show when={needOtp()}>
          <label>
            {t('login.otp')}
            <input ref={otp} name="otp" inputmode="numeric" autocomplete="one-time-code" maxlength="6" />
          </label>
          <p class="muted">{t('login.otp_needed')}</p>
        </Show>
        <Show when={error()}>
          <p class="error" role="alert">
            {error()}
          </p>
        </Show>
        <div class="actions">
          <Show when={props.guestAllowed}>
            <button type="button" onClick={() => navigate('/')}>
              {t('login.guest')}
            </button>
          </Show>
          <button type="submit" class="primary" disabled={busy()}>
            {t('login.submit')}
          </button>
        </div>
        <OtherSignIns busy={busy()} setBusy={setBusy} setError={setError} />
      </form>
    </main>
  );
}

/** Signs in with the token: the session's user, then back where the visitor was going. */
async function signedIn(tk: string): Promise<void> {
  token.set(tk);
  await loadMe();
  const back = new URLSearchParams(location.search).get('redirect');
  navigate(back && back.startsWith('/') && !back.startsWith('//') ? back : '/', true);
}

/** The token for a user name and password (and one-time code): hashed when the browser can, LDAP's with the password itself. */
async function passwordLogin(username: string, password: string, otpCode: string, ldap: boolean): Promise<string> {
  let res: { token: string };
  if (ldap) {
    // The directory needs the password itself.
    res = await api<{ token: string }>('/auth/login/ldap', { username, password, otp_code: otpCode });
  } else {
    const hashed = await hashPassword(password);
    const body = { username, password: hashed ?? password, otp_code: otpCode };
    res = await api<{ token: string }>(hashed ? '/auth/login/hash' : '/auth/login', body);
  }
  return res.token;
}

/** Single sign-on and passkey buttons, as the settings enable them. */
function OtherSignIns(props: { busy: boolean; setBusy: (on: boolean) => void; setError: (message: string) => void }) {
  const sso = () => {
    props.setError('');
    if (!startSso('sso_get_token', settings().sso_compatibility_mode === 'true', (tk) => void signedIn(tk), props.setError)) props.setError(t('login.sso_blocked'));
  };
  const passkey = async () => {
    props.setError('');
    if (!passkeysSupported()) return props.setError(t('login.passkey_unsupported'));
    props.setBusy(true);
    try {
      await signedIn(await signInWithPasskey());
    } catch (err) {
      // Closing the browser's passkey prompt is no error worth showing.
      if (!(err instanceof DOMException && err.name === 'NotAllowedError')) props.setError(err instanceof Error ? err.message : String(err));
    } finally {
      props.setBusy(false);
    }
  };
  return (
    <>
      <Show when={settings().sso_login_enabled === 'true'}>
        <div class="actions">
          <button type="button" name="sso" onClick={sso}>
            {t('login.sso')}
          </button>
        </div>
      </Show>
      <Show when={settings().webauthn_login_enabled === 'true'}>
        <div class="actions">
          <button type="button" data-testid="passkey-login" disabled={props.busy} onClick={passkey}>
            {t('login.passkey')}
          </button>
        </div>
      </Show>
    </>
  );
}
