import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import type { CipherAlgorithm } from 'ssh2';

/**
 * The ciphers OpenSSH's sshd offers, in its order. A client takes its own first choice the server
 * also offers: OpenSSH's is ChaCha20-Poly1305, then AES-CTR, then AES-GCM. Without ChaCha20 it took
 * AES-CTR with HMAC-SHA2-256, which costs ssh2 (OpenSSL through its binding) and the client about
 * a third more CPU per byte than ChaCha20-Poly1305 (AES-GCM costs least, but a client asks for it
 * only after the others).
 */
const CIPHERS: CipherAlgorithm[] = ['chacha20-poly1305@openssh.com', 'aes128-ctr', 'aes192-ctr', 'aes256-ctr', 'aes128-gcm@openssh.com', 'aes256-gcm@openssh.com'];

interface ChaChaBinding {
  ChaChaPolyCipher?: new (key: Buffer) => { encrypt(packet: Buffer, seqno: number): void };
}

/**
 * ChaCha20-Poly1305 works in ssh2's native binding only where the binding and Node's OpenSSL
 * agree: with Node 24's OpenSSL every encryption after the first fails ("digital envelope routines::invalid
 * operation") and the client sees its connection closed. A few packets are encrypted at start; the
 * cipher is offered only when that works (ssh2's JavaScript ChaCha20 is used when there is no
 * binding at all).
 */
export function sshCiphers(): CipherAlgorithm[] {
  return chachaWorks() ? CIPHERS : CIPHERS.filter((c) => c !== 'chacha20-poly1305@openssh.com');
}

function chachaWorks(): boolean {
  let binding: ChaChaBinding;
  try {
    binding = createRequire(import.meta.url)('ssh2/lib/protocol/crypto/build/Release/sshcrypto.node') as ChaChaBinding;
  } catch {
    return true; // no binding: ssh2's own implementation
  }
  if (!binding.ChaChaPolyCipher) return true;
  try {
    // The first packet passes on Node 24; every later one fails.
    const cipher = new binding.ChaChaPolyCipher(randomBytes(64));
    for (let seqno = 0; seqno < 3; seqno++) {
      const packet = Buffer.alloc(80);
      packet.writeUInt32BE(80 - 4 - 16, 0);
      cipher.encrypt(packet, seqno);
    }
    return true;
  } catch {
    return false;
  }
}
