/**
 * StartTLS cannot be downgraded: when the directory connection dies mid-flight, no search or
 * bind goes out in the clear afterwards. A TCP proxy between dockgate and a real slapd records
 * every byte dockgate sends and cuts the connection while a request is on its way.
 */
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeWithPeers, program } from '../../support/peers.js';
import { AuthenticatorUnavailableError } from '../../../lib/index.js';
import { ldapAuthenticator } from '../../../lib/token/authn/ldap/index.js';
import { openLdapClient } from '../../../lib/token/authn/ldap/ldap-connection.js';
import { resolveLdapOptions } from '../../../lib/token/authn/ldap/ldap-options.js';
import { LDAP_SERVICE, makeTlsFiles, startSlapd, type RunningSlapd } from '../support/index.js';
import { directoryLdif, LDAP_USERS, PEOPLE } from '../fixtures/ldap-directory.js';

/** The StartTLS extended request's OID (RFC 4511 §4.14.1), the one thing allowed in the clear. */
const STARTTLS_OID = '1.3.6.1.4.1.1466.20037';

interface RecordingProxy {
  port: number;
  /** Bytes the client sent, per connection, in order. */
  connections: Buffer[][];
  /** Cut connection `index` (default: whichever) at the client's next chunk on it, without forwarding it (a request lost mid-flight). */
  cutOnNextClientData(index?: number): void;
  close(): Promise<void>;
}

async function startProxy(targetPort: number): Promise<RecordingProxy> {
  const pairs = new Set<[Socket, Socket]>();
  const connections: Buffer[][] = [];
  let cutNext: number | 'any' | undefined;
  const server: Server = createServer((client) => {
    const sent: Buffer[] = [];
    const index = connections.push(sent) - 1;
    const upstream = connect(targetPort, '127.0.0.1');
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const cut = () => {
      client.destroy();
      upstream.destroy();
      pairs.delete(pair);
    };
    client.on('data', (chunk: Buffer) => {
      sent.push(chunk);
      if (cutNext === 'any' || cutNext === index) {
        cutNext = undefined;
        cut();
        return;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    client.on('close', cut);
    upstream.on('close', cut);
    client.on('error', cut);
    upstream.on('error', cut);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    connections,
    cutOnNextClientData: (index) => {
      cutNext = index ?? 'any';
    },
    close: async () => {
      for (const [a, b] of pairs) {
        a.destroy();
        b.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** What went out in the clear: each connection's bytes, unless they start with the StartTLS request (the rest is TLS). */
function cleartextRequests(proxy: RecordingProxy): string[] {
  return proxy.connections
    .map((chunks) => Buffer.concat(chunks))
    .filter((bytes) => bytes.length > 0 && !bytes.subarray(0, 64).toString('latin1').includes(STARTTLS_OID))
    .map((bytes) => bytes.toString('latin1'));
}

describeWithPeers('StartTLS to a real slapd is never downgraded when the connection dies mid-flight', [program('slapd', ['-VV']), program('ldapadd', ['-VV']), program('openssl', ['version'])], () => {
  let ldap: RunningSlapd;
  let tlsDir: string;
  let caPem: string;
  let proxy: RecordingProxy;

  beforeAll(async () => {
    tlsDir = await mkdtemp(join(tmpdir(), 'dockgate-ldap-downgrade-'));
    const tls = await makeTlsFiles(tlsDir);
    caPem = tls.caPem;
    ldap = await startSlapd({ ldif: directoryLdif(), tls });
  });
  beforeEach(async () => {
    proxy = await startProxy(ldap.port);
  });
  afterEach(async () => {
    await proxy.close();
  });
  afterAll(async () => {
    await ldap?.dispose();
    if (tlsDir) await rm(tlsDir, { recursive: true, force: true });
  });

  const options = () => resolveLdapOptions({
    url: `ldap://127.0.0.1:${proxy.port}`, bindDN: LDAP_SERVICE.dn, bindPassword: LDAP_SERVICE.password, baseDN: PEOPLE,
    tls: { ca: caPem, startTLS: true }, timeoutMs: 2000,
  });

  test('a StartTLS connection killed while a search is in flight: later searches and binds on that client are refused, none goes out in the clear', async () => {
    const resolved = options();
    const client = await openLdapClient(resolved, resolved.bind);
    expect(proxy.connections).toHaveLength(1);
    proxy.cutOnNextClientData();
    await expect(client.search(PEOPLE, { filter: '(uid=alice)' })).rejects.toThrow();
    // ldapts would now reconnect by itself, in the clear: the transport refuses that connection.
    await expect(client.search(PEOPLE, { filter: '(uid=alice)' })).rejects.toThrow();
    await expect(client.bind(`uid=alice,${PEOPLE}`, LDAP_USERS.alice.password)).rejects.toThrow();
    await client.unbind().catch(() => undefined);
    expect(cleartextRequests(proxy)).toEqual([]);
    expect(proxy.connections).toHaveLength(1);
  });

  test('through ldapAuthenticator: the login in flight is 503, the next one opens a new StartTLS connection; nothing in the clear', async () => {
    const authenticate = ldapAuthenticator({
      url: `ldap://127.0.0.1:${proxy.port}`, bindDN: LDAP_SERVICE.dn, bindPassword: LDAP_SERVICE.password, baseDN: PEOPLE,
      tls: { ca: caPem, startTLS: true }, timeoutMs: 2000,
    });
    const ask = () => authenticate({ username: 'alice', password: LDAP_USERS.alice.password, service: 's' });
    await expect(ask()).resolves.toMatchObject({ subject: 'alice' });
    // Connection 0 is the kept service connection: its next request is the next login's search.
    proxy.cutOnNextClientData(0);
    await expect(ask()).rejects.toBeInstanceOf(AuthenticatorUnavailableError);
    await expect(ask()).resolves.toMatchObject({ subject: 'alice' });
    expect(cleartextRequests(proxy)).toEqual([]);
    const all = Buffer.concat(proxy.connections.flat()).toString('latin1');
    expect(all).not.toContain(LDAP_USERS.alice.password);
    expect(all).not.toContain(LDAP_SERVICE.password);
  });
});
