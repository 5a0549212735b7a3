import { createHash, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';

/**
 * A software WebAuthn authenticator for API tests: ES256 keys from node:crypto, a real
 * attestation object (format "none", CBOR-encoded authenticator data with the COSE key) at
 * registration, and real ECDSA assertion signatures over authenticatorData ‖ SHA-256(clientDataJSON)
 * at sign-in, with a signature counter per credential. What it puts in clientDataJSON (origin)
 * and authenticatorData (RP ID hash, counter) can be overridden to play a phishing site, another
 * relying party or a cloned authenticator.
 */

type Cbor = number | string | Uint8Array | CborMap | { [key: string]: Cbor };
interface CborMap extends Map<number | string, Cbor> {}

function head(major: number, n: number): Buffer {
  if (n < 24) return Buffer.from([(major << 5) | n]);
  if (n < 0x100) return Buffer.from([(major << 5) | 24, n]);
  if (n < 0x10000) return Buffer.from([(major << 5) | 25, n >> 8, n & 0xff]);
  const b = Buffer.alloc(5);
  b[0] = (major << 5) | 26;
  b.writeUInt32BE(n, 1);
  return b;
}

/** The CBOR subset WebAuthn needs: integers, text, byte strings and maps. */
export function cbor(v: Cbor): Buffer {
  if (typeof v === 'number') return v >= 0 ? head(0, v) : head(1, -1 - v);
  if (typeof v === 'string') {
    const b = Buffer.from(v, 'utf8');
    return Buffer.concat([head(3, b.length), b]);
  }
  if (v instanceof Uint8Array) return Buffer.concat([head(2, v.length), Buffer.from(v)]);
  const entries = v instanceof Map ? [...v.entries()] : Object.entries(v);
  return Buffer.concat([head(5, entries.length), ...entries.flatMap(([k, x]) => [cbor(k), cbor(x)])]);
}

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest();
const b64url = (b: Buffer) => b.toString('base64url');

export interface SoftCredential {
  id: Buffer;
  privateKey: KeyObject;
  userHandle: Buffer;
  rpId: string;
  counter: number;
}

export interface CeremonyOverrides {
  /** clientDataJSON.origin (default: the authenticator's origin). */
  origin?: string;
  /** The RP ID whose hash goes into authenticatorData (default: the options' RP ID). */
  rpId?: string;
  /** The counter to report (default: the credential's, advanced by one). */
  counter?: number;
  /** Sign with this credential (default: the first one the options allow, or the first held). */
  credential?: SoftCredential;
  /** Clear the user-verified flag. */
  noUserVerification?: boolean;
}

export class SoftAuthenticator {
  readonly credentials: SoftCredential[] = [];
  /** A made-up AAGUID, so the listing's fingerprint can be checked. */
  readonly aaguid = Buffer.from('a7d6d93a8a0d11efb2b5b3a4f5e6d7c8', 'hex');

  constructor(readonly origin: string) {}

  /** Answers `navigator.credentials.create({publicKey})` for options as the server sent them. */
  create(publicKey: any, o: CeremonyOverrides = {}): any {
    const rpId = o.rpId ?? publicKey.rp.id;
    const { privateKey, publicKey: pub } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = pub.export({ format: 'jwk' });
    const cose = cbor(
      new Map<number, Cbor>([
        [1, 2], // kty: EC2
        [3, -7], // alg: ES256
        [-1, 1], // crv: P-256
        [-2, Buffer.from(jwk.x!, 'base64url')],
        [-3, Buffer.from(jwk.y!, 'base64url')],
      ]),
    );
    const id = Buffer.from(sha256(`${Date.now()}-${Math.random()}`).subarray(0, 16));
    const counter = o.counter ?? 0;
    const idLen = Buffer.alloc(2);
    idLen.writeUInt16BE(id.length);
    const authData = Buffer.concat([sha256(rpId), this.flags(o, 0x40), this.count(counter), this.aaguid, idLen, id, cose]);
    const clientDataJSON = Buffer.from(JSON.stringify({ type: 'webauthn.create', challenge: publicKey.challenge, origin: o.origin ?? this.origin, crossOrigin: false }));
    const attestationObject = cbor({ fmt: 'none', attStmt: {}, authData });
    this.credentials.push({ id, privateKey, userHandle: Buffer.from(publicKey.user.id, 'base64url'), rpId, counter });
    return {
      id: b64url(id),
      rawId: b64url(id),
      type: 'public-key',
      response: { clientDataJSON: b64url(clientDataJSON), attestationObject: b64url(attestationObject), transports: ['internal'] },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }

  /** Answers `navigator.credentials.get({publicKey})`; the credential's counter moves to the one reported. */
  get(publicKey: any, o: CeremonyOverrides = {}): any {
    const allowed: string[] = (publicKey.allowCredentials ?? []).map((c: { id: string }) => c.id);
    const cred = o.credential ?? this.credentials.find((c) => allowed.length === 0 || allowed.includes(b64url(c.id)));
    if (!cred) throw new Error('no credential for these options');
    const counter = o.counter ?? cred.counter + 1;
    cred.counter = counter;
    const authData = Buffer.concat([sha256(o.rpId ?? publicKey.rpId), this.flags(o, 0), this.count(counter)]);
    const clientDataJSON = Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge: publicKey.challenge, origin: o.origin ?? this.origin, crossOrigin: false }));
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), cred.privateKey);
    return {
      id: b64url(cred.id),
      rawId: b64url(cred.id),
      type: 'public-key',
      response: {
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authData),
        signature: b64url(signature),
        userHandle: b64url(cred.userHandle),
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }

  /** User present, user verified (unless cleared), plus `extra` (0x40: attested credential data). */
  private flags(o: CeremonyOverrides, extra: number): Buffer {
    return Buffer.from([0x01 | (o.noUserVerification ? 0 : 0x04) | extra]);
  }

  private count(n: number): Buffer {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(n);
    return b;
  }
}
