import { readFileSync, statSync } from 'node:fs';
import tls from 'node:tls';
import type { Settings } from '../../settings/service.js';

/**
 * FTP over TLS (RFC 4217) as OpenList configures it: `ftp_tls_public_cert_path` and
 * `ftp_tls_private_key_path` (PEM files) enable `AUTH TLS`; `ftp_mandatory_tls` refuses a login
 * before it; `ftp_implicit_tls` starts every connection in TLS. Files are read again when they
 * change, so a renewed certificate needs no restart.
 */
export class FtpTls {
  private cached?: { stamp: string; context: tls.SecureContext };

  constructor(private readonly settings: Settings) {}

  /** A certificate and a key are named (AUTH TLS is offered). */
  configured(): boolean {
    return this.settings.get('ftp_tls_public_cert_path').trim() !== '' && this.settings.get('ftp_tls_private_key_path').trim() !== '';
  }

  /** The server's TLS context, or undefined when none is configured; throws when the files cannot be read. */
  context(): tls.SecureContext | undefined {
    const certPath = this.settings.get('ftp_tls_public_cert_path').trim();
    const keyPath = this.settings.get('ftp_tls_private_key_path').trim();
    if (!certPath || !keyPath) return undefined;
    const stamp = [certPath, keyPath].map((p) => `${p}:${statSync(p).mtimeMs}`).join('|');
    if (this.cached?.stamp !== stamp) {
      this.cached = { stamp, context: tls.createSecureContext({ cert: readFileSync(certPath), key: readFileSync(keyPath) }) };
    }
    return this.cached.context;
  }

  get mandatory(): boolean {
    return this.settings.getBool('ftp_mandatory_tls');
  }

  get implicit(): boolean {
    return this.settings.getBool('ftp_implicit_tls');
  }
}

/** The server side of TLS over an accepted socket (control or data connection). */
export function serverTls(socket: import('node:net').Socket, context: tls.SecureContext): tls.TLSSocket {
  return new tls.TLSSocket(socket, { isServer: true, secureContext: context });
}
