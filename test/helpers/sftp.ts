import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client, type ConnectConfig, type SFTPWrapper } from 'ssh2';
import type { ProtocolListener } from '../../src/protocols/listeners.js';
import { startSftpServer } from '../../src/protocols/sftp/server.js';
import type { TestServer } from './server.js';

/** Starts the SFTP server of an in-process test server on a free loopback port. */
export async function startSftp(s: TestServer): Promise<ProtocolListener> {
  return startSftpServer(s.core, '127.0.0.1:0');
}

export interface SftpSession {
  client: Client;
  sftp: SFTPWrapper;
  end(): void;
}

/** Connects an ssh2 client and opens its SFTP channel. */
export function connectSftp(port: number, auth: Omit<ConnectConfig, 'host' | 'port'>): Promise<SftpSession> {
  return new Promise((resolve, reject) => {
    const client = new Client();
    client.once('error', reject);
    client.once('ready', () => {
      client.sftp((err, sftp) => {
        if (err) return reject(err);
        resolve({ client, sftp, end: () => client.end() });
      });
    });
    client.connect({ host: '127.0.0.1', port, readyTimeout: 10_000, ...auth });
  });
}

/** Calls an ssh2 SFTP method and resolves with its result (or rejects with its status error). */
export function call<T = unknown>(sftp: SFTPWrapper, method: string, ...args: unknown[]): Promise<T> {
  return new Promise((resolve, reject) => {
    (sftp as unknown as Record<string, (...a: unknown[]) => void>)[method]!.call(sftp, ...args, (err: Error | undefined, value: T) => (err ? reject(err) : resolve(value)));
  });
}
