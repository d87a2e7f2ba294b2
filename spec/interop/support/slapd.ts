import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';
import { runProgram } from './run-program.js';

/** The throwaway directory's suffix, its admin and a read-only service account. */
export const LDAP_SUFFIX = 'dc=dockgate,dc=test';
export const LDAP_ADMIN = { dn: `cn=admin,${LDAP_SUFFIX}`, password: 'admin secret' };
export const LDAP_SERVICE = { dn: `cn=reader,ou=services,${LDAP_SUFFIX}`, password: 'reader secret' };

/** Options of {@link startSlapd}. */
export interface SlapdOptions {
  /** LDIF added after start (users, then groups: the memberof overlay fills memberOf as groups are added). */
  ldif: string;
  /** PEM certificate, key and CA for ldaps:// and StartTLS. Defaults to none (plain ldap:// only). */
  tls?: { certFile: string; keyFile: string; caFile: string };
}

/** A running slapd. */
export interface RunningSlapd {
  /** `ldap://127.0.0.1:PORT`. */
  readonly url: string;
  /** `ldaps://127.0.0.1:PORT`, when started with TLS. */
  readonly ldapsUrl?: string;
  readonly port: number;
  logs(): string;
  /** Stops slapd (the directory stays on disk until {@link dispose}). */
  stop(): Promise<void>;
  /** Starts it again on the same ports and data. */
  restart(): Promise<void>;
  /** Stops and removes the temporary directory. */
  dispose(): Promise<void>;
}

function config(dir: string, tls: SlapdOptions['tls']): string {
  return [
    ...['core', 'cosine', 'inetorgperson', 'nis'].map((s) => `include /etc/ldap/schema/${s}.schema`),
    // As Active Directory and older servers do: a DN with an empty password is an anonymous
    // ("unauthenticated", RFC 4513 §5.1.2) bind that succeeds — what ldapAuthenticator must never take for a login.
    'allow bind_anon_dn',
    'modulepath /usr/lib/ldap',
    'moduleload back_mdb',
    'moduleload memberof',
    `pidfile ${join(dir, 'slapd.pid')}`,
    `argsfile ${join(dir, 'slapd.args')}`,
    ...(tls ? [`TLSCACertificateFile ${tls.caFile}`, `TLSCertificateFile ${tls.certFile}`, `TLSCertificateKeyFile ${tls.keyFile}`] : []),
    'database mdb',
    `suffix "${LDAP_SUFFIX}"`,
    `rootdn "${LDAP_ADMIN.dn}"`,
    `rootpw "${LDAP_ADMIN.password}"`,
    `directory ${join(dir, 'data')}`,
    'maxsize 16777216',
    'overlay memberof',
    // Passwords: only a bind may test them; entries: the service account reads, anonymous does not.
    'access to attrs=userPassword by self write by anonymous auth by * none',
    `access to * by dn.exact="${LDAP_SERVICE.dn}" read by self read by * none`,
    '',
  ].join('\n');
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Starts a real OpenLDAP slapd (Debian's package) on free 127.0.0.1 ports with its own config
 * (mdb database in a temporary directory, core/cosine/inetorgperson/nis schemas, the memberof
 * overlay), adds `ldif` with ldapadd as the admin, and returns once it answers.
 *
 * @example
 * const ldap = await startSlapd({ ldif });
 * ldapAuthenticator({ url: ldap.url, baseDN: `ou=people,${LDAP_SUFFIX}`, ... });
 */
export async function startSlapd(options: SlapdOptions): Promise<RunningSlapd> {
  const dir = await mkdtemp(join(tmpdir(), 'dockgate-slapd-'));
  await mkdir(join(dir, 'data'));
  const configFile = join(dir, 'slapd.conf');
  await writeFile(configFile, config(dir, options.tls));
  const port = await freePort();
  const tlsPort = options.tls ? await freePort() : undefined;
  const urls = [`ldap://127.0.0.1:${port}/`, ...(tlsPort ? [`ldaps://127.0.0.1:${tlsPort}/`] : [])];
  const lines: string[] = [];
  let child: ChildProcess | undefined;

  async function start(): Promise<void> {
    // -d 0: stay in the foreground (no fork), so the spec owns the process.
    const proc = spawn('slapd', ['-d', '0', '-h', urls.join(' '), '-f', configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    const keep = (chunk: Buffer) => {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      lines.splice(0, Math.max(0, lines.length - 50));
    };
    proc.stdout?.on('data', keep);
    proc.stderr?.on('data', keep);
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline && proc.exitCode === null) {
      if (await answers(port)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`slapd did not start:\n${lines.join('\n')}`);
  }

  async function stop(): Promise<void> {
    const proc = child;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const gone = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), 5000);
    await gone;
    clearTimeout(timer);
  }

  try {
    await start();
    const added = await runProgram('ldapadd', ['-x', '-H', urls[0] as string, '-D', LDAP_ADMIN.dn, '-w', LDAP_ADMIN.password], { input: options.ldif });
    if (added.code !== 0) throw new Error(`ldapadd failed: ${added.stderr}`);
  } catch (err) {
    await stop();
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    url: `ldap://127.0.0.1:${port}`,
    ...(tlsPort ? { ldapsUrl: `ldaps://127.0.0.1:${tlsPort}` } : {}),
    port,
    logs: () => lines.join('\n'),
    stop,
    restart: start,
    dispose: async () => {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A CA and a server certificate for 127.0.0.1, made with openssl in `dir`. */
export async function makeTlsFiles(dir: string): Promise<{ caFile: string; certFile: string; keyFile: string; caPem: string }> {
  const run = async (args: string[]) => {
    const r = await runProgram('openssl', args);
    if (r.code !== 0) throw new Error(`openssl ${args[0]} failed: ${r.stderr}`);
  };
  const f = (name: string) => join(dir, name);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await run(['req', '-x509', ...ec, '-keyout', f('ca.key'), '-out', f('ca.pem'), '-days', '2', '-subj', '/CN=dockgate spec CA']);
  await run(['req', ...ec, '-keyout', f('server.key'), '-out', f('server.csr'), '-subj', '/CN=127.0.0.1']);
  await writeFile(f('san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  await run(['x509', '-req', '-in', f('server.csr'), '-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-CAcreateserial', '-out', f('server.pem'), '-days', '2', '-extfile', f('san.ext')]);
  const { readFile } = await import('node:fs/promises');
  return { caFile: f('ca.pem'), certFile: f('server.pem'), keyFile: f('server.key'), caPem: await readFile(f('ca.pem'), 'utf8') };
}
