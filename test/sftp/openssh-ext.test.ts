import { EventEmitter } from 'node:events';
import type { SFTPWrapper } from 'ssh2';
import { describe, expect, it, vi } from 'vitest';
import type { Logger } from '../../src/logger.js';
import { advertiseExtensions, EXTENSIONS } from '../../src/protocols/sftp/openssh-ext.js';

/** The VERSION shim against stand-ins for ssh2's SFTP object: exact window accounting, and a no-op when internals differ. */
describe('SFTP VERSION extension shim', () => {
  const plain = Buffer.from([0, 0, 0, 5, 2, 0, 0, 0, 3]);
  const logger = () => ({ warn: vi.fn() }) as unknown as Logger & { warn: ReturnType<typeof vi.fn> };
  class Proto {
    sent: Array<[number, Buffer]> = [];
    channelData(id: number, data: Buffer) {
      this.sent.push([id, data]);
    }
  }
  const fake = (window: number) => Object.assign(new EventEmitter(), { _protocol: new Proto(), outgoing: { id: 7, state: 'open', window, packetSize: 32768 }, _buffer: [] });

  it('swaps the plain VERSION for one listing the extensions and charges the extra bytes to the window', () => {
    const sftp = fake(1000);
    expect(advertiseExtensions(sftp as unknown as SFTPWrapper, logger())).toBe(true);
    sftp._protocol.channelData(3, plain); // another channel: untouched
    sftp.outgoing.window -= plain.length; // what ssh2's sendOrBuffer does before channelData
    sftp._protocol.channelData(7, plain);
    sftp.emit('ready');
    const [other, [id, packet]] = sftp._protocol.sent as [[number, Buffer], [number, Buffer]];
    expect(other[1]).toEqual(plain);
    expect(id).toBe(7);
    expect(packet.readUInt32BE(0)).toBe(packet.length - 4);
    expect(packet.subarray(4, 9)).toEqual(plain.subarray(4));
    const text = packet.subarray(9).toString('latin1');
    for (const [name, version] of EXTENSIONS) expect(text).toContain(`${name}\0\0\0\x01${version}`);
    expect(text).not.toContain('hardlink');
    expect(sftp.outgoing.window).toBe(1000 - packet.length);
    // the wrapper is gone: the prototype's method serves again
    expect(Object.prototype.hasOwnProperty.call(sftp._protocol, 'channelData')).toBe(false);
  });

  it('sends the plain VERSION when the window can not take the longer one', () => {
    const sftp = fake(20);
    advertiseExtensions(sftp as unknown as SFTPWrapper, logger());
    sftp.outgoing.window -= plain.length;
    sftp._protocol.channelData(7, plain);
    expect(sftp._protocol.sent).toEqual([[7, plain]]);
    expect(sftp.outgoing.window).toBe(11);
  });

  it('is a no-op, logged once, when ssh2 internals differ', () => {
    const log = logger();
    const odd = Object.assign(new EventEmitter(), { outgoing: { id: 1 } });
    expect(advertiseExtensions(odd as unknown as SFTPWrapper, log)).toBe(false);
    expect(advertiseExtensions(odd as unknown as SFTPWrapper, log)).toBe(false);
    expect(log.warn).toHaveBeenCalledTimes(1);
  });
});
