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

/**
 * A data connection in TLS once its handshake is complete: a transfer with nothing to send (an
 * empty listing, a 0-byte file) must not end the connection before that, or a GnuTLS client
 * (lftp) fails with "the TLS connection was non-properly terminated".
 */
export function secureDataSocket(socket: import('node:net').Socket, context: tls.SecureContext, timeoutMs: number): Promise<tls.TLSSocket> {
  const secured = serverTls(socket, context);
  return new Promise((resolve, reject) => {
    const fail = (err: Error) => {
      clearTimeout(timer);
      secured.off('secure', ok);
      secured.destroy();
      reject(err);
    };
    const ok = () => {
      clearTimeout(timer);
      secured.off('error', fail);
      secured.off('close', closed);
      resolve(secured);
    };
    const closed = () => fail(new Error('the data connection closed during its TLS handshake'));
    const timer = setTimeout(() => fail(new Error('the TLS handshake of the data connection did not complete in time')), timeoutMs);
    secured.once('secure', ok);
    secured.once('error', fail);
    secured.once('close', closed);
  });
}
