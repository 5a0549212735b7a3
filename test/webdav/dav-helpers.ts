import type { AddressInfo } from 'node:net';
import { hasProgram } from '../helpers/daemons.js';
import type { TestServer } from '../helpers/server.js';

export const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;

/** Starts the test server's app on a loopback port (for real clients) and returns its base URL. */
export async function listen(s: TestServer): Promise<string> {
  await s.app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(s.app.server.address() as AddressInfo).port}`;
}

/** Whether an external program is on PATH; under CI a missing one fails the run, else it is skipped loudly. */
export function requireProgram(program: string, what: string): boolean {
  if (hasProgram(program)) return true;
  if (process.env.CI) throw new Error(`CI needs ${program} for ${what} (.ci/packages.sh installs it)`);
  console.warn(`\n*** SKIPPING ${what}: ${program} is not installed ***\n`);
  return false;
}

/** The `<D:href>` values of a multistatus body, decoded. */
export const hrefs = (xml: string) => [...xml.matchAll(/<D:href>([^<]*)<\/D:href>/g)].map((m) => decodeURIComponent(m[1]!));
