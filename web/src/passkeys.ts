// Passkeys (WebAuthn) in the browser: the server's JSON options become the binary ones
// navigator.credentials wants, and the credential it gives back becomes JSON again
// (done by hand, so browsers without PublicKeyCredential.parse*FromJSON work too).
import { api } from './api';

type Json = Record<string, any>;

const bytes = (b64url: string): ArrayBuffer => {
  const b64 = b64url.replace(/-/g, '+').replace(/_/g, '/');
  const bin = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0)).buffer;
};

const b64url = (buf: ArrayBuffer | null | undefined): string | undefined => {
  if (!buf) return undefined;
  let bin = '';
  for (const b of new Uint8Array(buf)) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
};

const descriptors = (list?: Json[]) => list?.map((c) => ({ ...c, id: bytes(c.id) }));

/** What PublicKeyCredential.toJSON() gives, around the ceremony's own `response`. */
const credentialJson = (cred: PublicKeyCredential, response: Json) => ({
  id: cred.id,
  rawId: b64url(cred.rawId),
  type: cred.type,
  response,
  clientExtensionResults: cred.getClientExtensionResults(),
  authenticatorAttachment: cred.authenticatorAttachment ?? undefined,
});

export const passkeysSupported = () => typeof window.PublicKeyCredential === 'function' && !!navigator.credentials;

/** Adds a passkey to the signed-in account (the browser asks for the screen lock or the key). */
export async function registerPasskey(): Promise<void> {
  const begin = await api<{ options: { publicKey: Json }; session: string }>('/authn/webauthn_begin_registration');
  const o = begin.options.publicKey;
  const cred = (await navigator.credentials.create({
    publicKey: { ...o, challenge: bytes(o.challenge), user: { ...o.user, id: bytes(o.user.id) }, excludeCredentials: descriptors(o.excludeCredentials) } as PublicKeyCredentialCreationOptions,
  })) as PublicKeyCredential | null;
  if (!cred) throw new Error('no passkey was created');
  const r = cred.response as AuthenticatorAttestationResponse;
  const response = { clientDataJSON: b64url(r.clientDataJSON), attestationObject: b64url(r.attestationObject), transports: r.getTransports?.() ?? [] };
  await api('/authn/webauthn_finish_registration', credentialJson(cred, response), 'POST', { session: begin.session });
}

/** Signs in with any passkey of this site the browser holds; answers the session token. */
export async function signInWithPasskey(): Promise<string> {
  const begin = await api<{ options: { publicKey: Json }; session: string }>('/authn/webauthn_begin_login');
  const o = begin.options.publicKey;
  const cred = (await navigator.credentials.get({
    publicKey: { ...o, challenge: bytes(o.challenge), allowCredentials: descriptors(o.allowCredentials) } as PublicKeyCredentialRequestOptions,
  })) as PublicKeyCredential | null;
  if (!cred) throw new Error('no passkey was chosen');
  const r = cred.response as AuthenticatorAssertionResponse;
  const response = { clientDataJSON: b64url(r.clientDataJSON), authenticatorData: b64url(r.authenticatorData), signature: b64url(r.signature), userHandle: b64url(r.userHandle) };
  const res = await api<{ token: string }>('/authn/webauthn_finish_login', credentialJson(cred, response), 'POST', { session: begin.session });
  return res.token;
}
