// A throwaway OpenLDAP slapd for bench:ldap: mdb in a mkdtemp directory, one service account and
// one user, on a free 127.0.0.1 port; removed on stop.
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const SUFFIX = 'dc=bench,dc=test';
export const SERVICE = { dn: `cn=reader,${SUFFIX}`, password: 'reader' };
export const USER = { uid: 'alice', dn: `uid=alice,ou=people,${SUFFIX}`, password: 'alice pw' };

const freePort = () => new Promise((resolve) => {
  const s = createServer().listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
});
const answers = (port) => new Promise((resolve) => {
  const socket = connect(port, '127.0.0.1');
  socket.once('connect', () => { socket.destroy(); resolve(true); });
  socket.once('error', () => resolve(false));
});

export async function startSlapd() {
  const dir = mkdtempSync(join(tmpdir(), 'dockgate-bench-slapd-'));
  mkdirSync(join(dir, 'data'));
  const conf = join(dir, 'slapd.conf');
  writeFileSync(conf, [
    ...['core', 'cosine', 'inetorgperson'].map((s) => `include /etc/ldap/schema/${s}.schema`),
    'modulepath /usr/lib/ldap', 'moduleload back_mdb', `pidfile ${join(dir, 'pid')}`,
    'database mdb', `suffix "${SUFFIX}"`, `rootdn "cn=admin,${SUFFIX}"`, 'rootpw admin', `directory ${join(dir, 'data')}`,
    'access to attrs=userPassword by self write by anonymous auth by * none',
    `access to * by dn.exact="${SERVICE.dn}" read by * none`, '',
  ].join('\n'));
  const port = await freePort();
  const url = `ldap://127.0.0.1:${port}`;
  const child = spawn('slapd', ['-d', '0', '-h', `${url}/`, '-f', conf], { stdio: 'ignore' });
  const deadline = Date.now() + 15000;
  while (!(await answers(port))) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error('slapd did not start');
    await new Promise((r) => setTimeout(r, 50));
  }
  const ldif = [
    `dn: ${SUFFIX}\nobjectClass: dcObject\nobjectClass: organization\no: bench\ndc: bench`,
    `dn: ou=people,${SUFFIX}\nobjectClass: organizationalUnit\nou: people`,
    `dn: ${SERVICE.dn}\nobjectClass: organizationalRole\nobjectClass: simpleSecurityObject\ncn: reader\nuserPassword: ${SERVICE.password}`,
    `dn: ${USER.dn}\nobjectClass: inetOrgPerson\nuid: alice\ncn: alice\nsn: alice\nuserPassword: ${USER.password}`,
  ].join('\n\n') + '\n';
  await new Promise((resolve, reject) => {
    const p = execFile('ldapadd', ['-x', '-H', url, '-D', `cn=admin,${SUFFIX}`, '-w', 'admin'], (err) => (err ? reject(err) : resolve()));
    p.stdin.end(ldif);
  });
  return {
    url,
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
