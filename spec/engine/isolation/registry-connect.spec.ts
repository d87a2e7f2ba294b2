import { afterAll, describe, expect, test } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { describeWithPeers } from '../../support/peers.js';
import { bwrap } from '../sandbox-socket.js';
import { registryConnectCheck } from '../../../lib/engine/policy/registry-hosts.js';
import { tenantSandbox, contextOf } from './support.js';

const d = (title: string, body: () => void) => describeWithPeers(title, [bwrap], body);

/** A server on the host that counts the connections made to it (what a tenant's pull must not reach). */
function counted(address: string, answer: (url: string, port: number) => { status: number; headers?: Record<string, string> }) {
  let reached = 0;
  const server: Server = createServer((req, res) => {
    const { status, headers } = answer(req.url ?? '', (server.address() as { port: number }).port);
    res.writeHead(status, { 'Content-Type': 'application/json', ...headers }).end('{"errors":[{"code":"UNAUTHORIZED"}]}');
  });
  server.on('connection', () => reached++);
  const port = new Promise<number>((resolve) => server.listen(0, address, () => resolve((server.address() as { port: number }).port)));
  afterAll(() => new Promise((resolve) => server.close(resolve)));
  return { port, reached: () => reached };
}

/** The token realm and the redirect target a hostile registry names: services on the host's loopback. */
const realm = counted('127.0.0.1', () => ({ status: 200 }));
const elsewhere = counted('127.0.0.1', () => ({ status: 200 }));
/** A registry tenants may name (127.0.0.2 is listed), which sends its clients to the services above. */
const registry = counted('127.0.0.2', (url): { status: number; headers: Record<string, string> } => url.startsWith('/v2/bob/moved/')
  ? { status: 307, headers: { Location: `http://127.0.0.1:${elsewherePort}${url}` } }
  : { status: 401, headers: { 'WWW-Authenticate': `Bearer realm="http://127.0.0.1:${realmPort}/token",service="registry"` } });
let realmPort = 0;
let elsewherePort = 0;

const listed = tenantSandbox('dockgate-iso-connect-list', { policy: { registryHosts: ['127.0.0.2'] } });
const open = tenantSandbox('dockgate-iso-connect');

/** This machine's own name: a DNS name (not `localhost`) that resolves to loopback. */
const ownName = hostname().toLowerCase();
const ownNameOnLoopback = await lookup(ownName).then(({ address }) => /^127\.|^::1$/.test(address), () => false);
const local = counted('127.0.0.1', () => ({ status: 404 }));


d('every connection a tenant\'s registry operation makes passes the registry-host rule (redirects and token realms included)', () => {
  test('with a list, a listed registry\'s token realm on an unlisted host is never contacted: 403 naming it', async () => {
    realmPort = await realm.port;
    const host = `127.0.0.2:${await registry.port}`;
    const before = registry.reached();
    const res = await listed.call('bob', 'POST', `/images/create?fromImage=${host}/bob/app&tag=1`);
    expect(registry.reached()).toBeGreaterThan(before);
    expect(realm.reached()).toBe(0);
    expect(res.status).toBe(403);
    expect(res.json.message).toContain(`127.0.0.1:${realmPort} is not one of the registry hosts tenants may reach (registryHosts)`);
  });

  test('with a list, a listed registry\'s redirect to an unlisted host is never followed: 403 naming it', async () => {
    elsewherePort = await elsewhere.port;
    const host = `127.0.0.2:${await registry.port}`;
    const res = await listed.call('bob', 'POST', `/images/create?fromImage=${host}/bob/moved&tag=1`);
    expect(elsewhere.reached()).toBe(0);
    expect(res.status).toBe(403);
    expect(res.json.message).toContain(`127.0.0.1:${elsewherePort} is not one of the registry hosts tenants may reach (registryHosts)`);
  });

  test('with a list, a build\'s FROM pull stops at the realm the same way', async () => {
    realmPort = await realm.port;
    const host = `127.0.0.2:${await registry.port}`;
    const res = await listed.call('bob', 'POST', '/build', await contextOf(`FROM ${host}/bob/base\n`));
    const error = res.body.toString().split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as { error?: string }).find((l) => l.error)?.error;
    expect(error).toContain(`127.0.0.1:${realmPort} is not one of the registry hosts tenants may reach (registryHosts)`);
    expect(realm.reached()).toBe(0);
  });

  // Needs a DNS name (not `localhost`) on loopback: this machine's own name, as /etc/hosts maps it here; skipped, visibly, where it is not.
  (ownNameOnLoopback ? test : test.skip)('without a list, a DNS name that resolves to loopback is refused when connecting: pull, push, FROM and login never reach it', async () => {
    const address = (await lookup(ownName)).address;
    const host = `${ownName}:${await local.port}`;
    const refused = `${ownName}:${await local.port} resolves to ${address}, a loopback or link-local address, which tenants may not reach (list the hosts they may name in registryHosts)`;

    const pull = await open.call('bob', 'POST', `/images/create?fromImage=${host}/bob/app&tag=1`);
    expect(pull.status).toBe(403);
    expect(pull.json.message).toContain(refused);

    expect((await open.call('bob', 'POST', `/images/busybox/tag?repo=${host}/bob/app&tag=1`)).status).toBe(201);
    const push = await open.call('bob', 'POST', `/images/${host}/bob/app/push?tag=1`, undefined, undefined, { 'X-Registry-Auth': 'e30=' });
    expect(push.body.toString()).toContain(refused);

    const build = await open.call('bob', 'POST', '/build', await contextOf(`FROM ${host}/bob/base\n`));
    expect(build.body.toString()).toContain(refused);

    const login = await open.call('bob', 'POST', '/auth', { username: 'bob', password: 'pw', serveraddress: host });
    expect(login.status).toBe(403);
    expect(login.json.message).toContain(refused);
    expect(local.reached()).toBe(0);

    // The administrator's pulls connect anywhere, as before.
    await open.call('alice', 'POST', `/images/create?fromImage=${host}/library/app&tag=1`);
    expect(local.reached()).toBeGreaterThan(0);
  });
});

describe('registryConnectCheck: the rule each connection passes, on the address it resolved to', () => {
  const unlisted = registryConnectCheck(undefined);
  test('without a list, loopback, link-local and unspecified addresses are refused whatever the name, IPv4-mapped forms included', () => {
    for (const address of ['127.0.0.1', '127.1.2.3', '169.254.169.254', '0.0.0.0', '::1', '::', 'fe80::1', '::ffff:127.0.0.1', '::ffff:a9fe:a9fe']) {
      expect({ address, why: unlisted({ host: 'registry.example.com', port: 443, address }) }).toEqual({ address, why: expect.stringContaining(`registry.example.com:443 resolves to ${address}, a loopback or link-local address`) });
    }
    expect(unlisted({ host: '169.254.169.254', port: 80, address: '169.254.169.254' })).toBe('169.254.169.254:80 is a loopback or link-local address, which tenants may not reach (list the hosts they may name in registryHosts)');
    expect(unlisted({ host: 'registry.example.com', port: 443, address: '93.184.216.34' })).toBeUndefined();
    expect(unlisted({ host: '10.0.0.5', port: 5000, address: '10.0.0.5' })).toBeUndefined();
  });
  test('with a list, only its host:port pairs (any port for a bare host; Docker Hub\'s registry host is docker.io), whatever they resolve to', () => {
    const listed = registryConnectCheck([{ host: '127.0.0.2' }, { host: 'docker.io' }, { host: 'auth.example.com', port: '443' }]);
    expect(listed({ host: '127.0.0.2', port: 5000, address: '127.0.0.2' })).toBeUndefined();
    expect(listed({ host: 'registry-1.docker.io', port: 443, address: '54.1.2.3' })).toBeUndefined();
    expect(listed({ host: 'auth.example.com', port: 443, address: '127.0.0.1' })).toBeUndefined();
    expect(listed({ host: 'auth.example.com', port: 8443, address: '1.2.3.4' })).toBe('auth.example.com:8443 is not one of the registry hosts tenants may reach (registryHosts)');
    expect(listed({ host: '::1', port: 80, address: '::1' })).toBe('[::1]:80 is not one of the registry hosts tenants may reach (registryHosts)');
  });
});
