import { randomBytes } from 'node:crypto';
import type { SFTPWrapper } from 'ssh2';
import { describe, expect, it } from 'vitest';
import type { Logger } from '../../src/logger.js';
import { DATA_HEADER, DataSender } from '../../src/protocols/sftp/data-sender.js';

const log = { warn: () => undefined } as unknown as Logger;

/**
 * The parts of ssh2's SFTP object the sender uses, recording the channel's bytes: `channelData`
 * copies (as ssh2's does), `data()` sends what the window takes and keeps the rest (as ssh2's
 * tryWritePayload), the window opens through `adjust` (as ssh2's CHANNEL_WINDOW_ADJUST handler).
 */
function fakeChannel(window: number, packetSize: number) {
  const sent: Buffer[] = [];
  const fake = {
    outgoing: { id: 7, state: 'open', window, packetSize },
    _buffer: [] as Buffer[],
    _protocol: {
      channelData(id: number, data: Buffer) {
        expect(id).toBe(7);
        expect(data.length).toBeLessThanOrEqual(packetSize);
        sent.push(Buffer.from(data));
      },
    },
    data(reqId: number, data: Buffer) {
      const packet = Buffer.alloc(DATA_HEADER + data.length);
      packet.writeUInt32BE(packet.length - 4, 0);
      packet[4] = 103;
      packet.writeUInt32BE(reqId, 5);
      packet.writeUInt32BE(data.length, 9);
      data.copy(packet, DATA_HEADER);
      fake.write(packet);
    },
    write(payload: Buffer) {
      let p = 0;
      while (p < payload.length && fake.outgoing.window > 0) {
        const n = Math.min(payload.length - p, fake.outgoing.window, packetSize);
        fake.outgoing.window -= n;
        fake._protocol.channelData(7, payload.subarray(p, p + n));
        p += n;
      }
      if (p < payload.length) fake._buffer.push(payload.subarray(p));
    },
    adjust(amount: number) {
      fake.outgoing.window += amount;
      const kept = fake._buffer.splice(0);
      for (const b of kept) fake.write(b);
    },
  };
  /** The channel's bytes parsed back into DATA answers: request id and data, in order. */
  const answers = () => {
    const all = Buffer.concat(sent);
    const out: Array<[number, Buffer]> = [];
    for (let p = 0; p < all.length; ) {
      const len = all.readUInt32BE(p);
      expect(all[p + 4]).toBe(103);
      const dataLen = all.readUInt32BE(p + 9);
      expect(len).toBe(DATA_HEADER - 4 + dataLen);
      out.push([all.readUInt32BE(p + 5), all.subarray(p + DATA_HEADER, p + DATA_HEADER + dataLen)]);
      p += 4 + len;
    }
    return out;
  };
  return { fake, sent, answers, sftp: fake as unknown as SFTPWrapper };
}

const tick = () => new Promise<void>((resolve) => process.nextTick(resolve));

function answer(sender: DataSender, reqId: number, data: Buffer): Buffer {
  const buf = sender.take(data.length);
  data.copy(buf, DATA_HEADER);
  sender.send(reqId, buf, data.length);
  return buf;
}

describe('SFTP DataSender', () => {
  it('sends answers whole, in packets of the client packet size, and reuses their buffers', () => {
    const { answers, sftp, fake } = fakeChannel(1 << 20, 32 * 1024);
    const sender = new DataSender(sftp, log);
    const bodies = [randomBytes(64 * 1024), randomBytes(100), randomBytes(40_000)];
    const used = bodies.map((b, i) => answer(sender, i + 1, b));
    expect(answers()).toEqual(bodies.map((b, i) => [i + 1, b]));
    expect(fake.outgoing.window).toBe((1 << 20) - bodies.reduce((n, b) => n + DATA_HEADER + b.length, 0));
    // The buffers come back from the pool once their answers went out (ssh2 copied them).
    expect(sender.take(64 * 1024)).toBe(used[0]);
    expect(sender.take(40_000)).toBe(used[2]);
    expect(sender.take(64 * 1024)).not.toBe(used[0]);
  });

  it('keeps answers the window can not take until the client opens it, in order; a window too small goes through sftp.data', async () => {
    const size = 64 * 1024;
    const { answers, sftp, fake, sent } = fakeChannel(2 * size + 2 * DATA_HEADER + 1000, 32 * 1024);
    const sender = new DataSender(sftp, log);
    const bodies = Array.from({ length: 6 }, () => randomBytes(size));
    bodies.forEach((b, i) => answer(sender, i + 1, b));
    // Two fit whole; the third went to ssh2's path (1000 bytes sent, the rest kept there).
    expect(fake.outgoing.window).toBe(0);
    expect(fake._buffer).toHaveLength(1);
    const before = sent.length;
    fake.adjust(size);
    await tick();
    // ssh2's rest went first, then the fourth through sftp.data as far as the window went.
    expect(sent.length).toBeGreaterThan(before);
    expect(fake.outgoing.window).toBe(0);
    expect(fake._buffer).toHaveLength(1);
    fake.adjust(10 * size);
    await tick();
    expect(answers()).toEqual(bodies.map((b, i) => [i + 1, b]));
  });

  it('drops what waits when the channel closes', async () => {
    const { answers, sftp, fake } = fakeChannel(DATA_HEADER + 50, 32 * 1024);
    const sender = new DataSender(sftp, log);
    answer(sender, 1, randomBytes(50));
    answer(sender, 2, randomBytes(50));
    sender.close();
    fake.adjust(1 << 20);
    await tick();
    expect(answers().map(([id]) => id)).toEqual([1]);
  });
});
