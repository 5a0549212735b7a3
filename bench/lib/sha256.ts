import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';

type Bytes = Uint8Array | ArrayBuffer | ArrayBufferView | string;
const toBytes = (d: Bytes): Buffer | string => (typeof d === 'string' ? d : d instanceof ArrayBuffer ? Buffer.from(d) : Buffer.from(d.buffer, d.byteOffset, d.byteLength));

/** The SHA-256 / HMAC constructor the SDK's SigV4 signer takes, over node:crypto. */
export class Sha256 {
  private readonly h: Hash | Hmac;
  constructor(secret?: Bytes) {
    this.h = secret ? createHmac('sha256', toBytes(secret)) : createHash('sha256');
  }
  update(data: Bytes): void {
    this.h.update(toBytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.h.digest());
  }
}
