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

  const signedIn = async (tk: string) => {
    token.set(tk);
    await loadMe();
    const back = new URLSearchParams(location.search).get('redirect');
    navigate(back && back.startsWith('/') && !back.startsWith('//') ? back : '/', true);
  };

  const sso = () => {
    setError('');
    if (!startSso('sso_get_token', settings().sso_compatibility_mode === 'true', (tk) => void signedIn(tk), setError)) setError(t('login.sso_blocked'));
  };

  const passkey = async () => {
    setError('');
    if (!passkeysSupported()) return setError(t('login.passkey_unsupported'));
    setBusy(true);
    try {
      await signedIn(await signInWithPasskey());
    } catch (err) {
      // Closing the browser's passkey prompt is no error worth showing.
      if (!(err instanceof DOMException && err.name === 'NotAllowedError')) setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    try {
      const otpCode = otp?.value ?? '';
      let res: { token: string };
      if (ldap?.checked) {
        // The directory needs the password itself.
        res = await api<{ token: string }>('/auth/login/ldap', { username: user.value, password: pass.value, otp_code: otpCode });
      } else {
        const hashed = await hashPassword(pass.value);
        const body = { username: user.value, password: hashed ?? pass.value, otp_code: otpCode };
        res = await api<{ token: string }>(hashed ? '/auth/login/hash' : '/auth/login', body);
      }
      await signedIn(res.token);
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
        <Show when={settings().sso_login_enabled === 'true'}>
          <div class="actions">
            <button type="button" name="sso" onClick={sso}>
              {t('login.sso')}
            </button>
          </div>
        </Show>
        <Show when={settings().webauthn_login_enabled === 'true'}>
          <div class="actions">
            <button type="button" data-testid="passkey-login" disabled={busy()} onClick={passkey}>
              {t('login.passkey')}
            </button>
          </div>
        </Show>
      </form>
    </main>
  );
}
