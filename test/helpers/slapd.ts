import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'ldapts';
import { hasProgram } from './daemons.js';
import { freePort } from './process.js';
import { waitFor } from './wait.js';

export const LDAP_BASE = 'dc=atrium,dc=test';
export const LDAP_MANAGER_DN = `cn=manager,${LDAP_BASE}`;
export const LDAP_MANAGER_PASSWORD = 'manager-secret';

export interface Slapd {
  /** ldap://127.0.0.1:port */
  url: string;
  /** ldaps://127.0.0.1:port (certificate of the test CA for 127.0.0.1 / localhost) */
  ldapsUrl: string;
  /** PEM of the test CA that signed the server certificate. */
  caPem: string;
  /** PEM of a CA that signed nothing here (a client trusting only it must refuse the server). */
  otherCaPem: string;
  /** Adds `uid=<name>,ou=people,<base>` to the running directory (as the manager). */
  addUser(uid: string, password: string): Promise<void>;
  stop(): Promise<void>;
}

export const hasSlapd = () => hasProgram('slapd') && hasProgram('slapadd') && hasProgram('openssl');

function openssl(dir: string, ...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
}

/** A CA and a server certificate for 127.0.0.1/localhost signed by it; plus an unrelated CA. */
function makeCerts(dir: string): void {
  for (const ca of ['ca', 'other-ca']) {
    openssl(dir, 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', `/CN=Atrium test ${ca}`, '-keyout', `${ca}.key`, '-out', `${ca}.pem`);
  }
  openssl(dir, 'req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', 'server.key', '-out', 'server.csr');
  writeFileSync(path.join(dir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  openssl(dir, 'x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2', '-extfile', 'ext.cnf', '-out', 'server.pem');
}

/** One seeded user per entry: `uid=<name>,ou=people,<base>` with the given password. */
export async function startSlapd(users: Record<string, string>): Promise<Slapd> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'atrium-slapd-'));
  const dbDir = path.join(dir, 'db');
  mkdirSync(dbDir);
  makeCerts(dir);
  const conf = path.join(dir, 'slapd.conf');
  writeFileSync(
    conf,
    [
      ...['core', 'cosine', 'inetorgperson', 'nis'].map((s) => `include /etc/ldap/schema/${s}.schema`),
      `pidfile ${dir}/slapd.pid`,
      'modulepath /usr/lib/ldap',
      'moduleload back_mdb',
      `TLSCACertificateFile ${dir}/ca.pem`,
      `TLSCertificateFile ${dir}/server.pem`,
      `TLSCertificateKeyFile ${dir}/server.key`,
      'database mdb',
      `suffix "${LDAP_BASE}"`,
      `rootdn "${LDAP_MANAGER_DN}"`,
      `rootpw ${LDAP_MANAGER_PASSWORD}`,
      `directory ${dbDir}`,
      'maxsize 10485760',
      'access to attrs=userPassword by self read by anonymous auth by * none',
      'access to * by users read by * none',
      '',
    ].join('\n'),
  );
  const entries = [
    `dn: ${LDAP_BASE}\nobjectClass: dcObject\nobjectClass: organization\ndc: atrium\no: Atrium test`,
    `dn: ou=people,${LDAP_BASE}\nobjectClass: organizationalUnit\nou: people`,
    ...Object.entries(users).map(
      ([uid, pw]) => `dn: uid=${uid},ou=people,${LDAP_BASE}\nobjectClass: inetOrgPerson\nuid: ${uid}\ncn: ${uid}\nsn: ${uid}\nuserPassword: ${pw}`,
    ),
  ];
  writeFileSync(path.join(dir, 'seed.ldif'), `${entries.join('\n\n')}\n`);
  execFileSync('slapadd', ['-f', conf, '-l', path.join(dir, 'seed.ldif')], { stdio: 'ignore' });
  const port = await freePort();
  const tlsPort = await freePort();
  const url = `ldap://127.0.0.1:${port}`;
  const ldapsUrl = `ldaps://127.0.0.1:${tlsPort}`;
  // -d 0 keeps slapd in the foreground (so it ends with the test) without debug output
  const child: ChildProcess = spawn('slapd', ['-f', conf, '-h', `${url}/ ${ldapsUrl}/`, '-d', '0'], { stdio: 'ignore' });
  const listening = async () =>
    new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => {
        s.end();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
  await waitFor(listening, 15_000);
  return {
    url,
    ldapsUrl,
    caPem: readFileSync(path.join(dir, 'ca.pem'), 'utf8'),
    otherCaPem: readFileSync(path.join(dir, 'other-ca.pem'), 'utf8'),
    async addUser(uid, password) {
      const client = new Client({ url });
      try {
        await client.bind(LDAP_MANAGER_DN, LDAP_MANAGER_PASSWORD);
        await client.add(`uid=${uid},ou=people,${LDAP_BASE}`, { objectClass: 'inetOrgPerson', uid, cn: uid, sn: uid, userPassword: password });
      } finally {
        await client.unbind();
      }
    },
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
