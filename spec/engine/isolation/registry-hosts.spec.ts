import { describe, expect, test } from '@jest/globals';
import { imageNamePolicy } from '../../../lib/engine/index.js';
import { registryHostRefusal } from '../../../lib/engine/policy/registry-hosts.js';
import { describeWithPeers } from '../../support/peers.js';
import { bwrap } from '../sandbox-socket.js';
import { tenantSandbox, contextOf, countingServer } from './support.js';

const d = (title: string, body: () => void) => describeWithPeers(title, [bwrap], body);
const { call } = tenantSandbox('dockgate-iso-hosts');

/** A service on the host's loopback (what a tenant must not reach through a pull) that counts connections. */
const service = countingServer((req, res) => res.writeHead(404).end());


const refusal = (ref: string, domain: string) => `${ref}: registry ${domain} is a loopback or link-local host, which tenants may not pull from or push to (list the hosts they may name in registryHosts)`;

d('a tenant\'s pulls and pushes reach no loopback or link-local registry host', () => {
  test('docker pull of HOST/bob/app from loopback (in every spelling) is a 403 naming the reference; nothing connects', async () => {
    const p = await service.port;
    const before = service.reached;
    for (const domain of [`127.0.0.1:${p}`, `localhost:${p}`, `127.1:${p}`, `2130706433:${p}`, `[::1]:${p}`, `[::ffff:7f00:1]:${p}`, `0.0.0.0:${p}`]) {
      const res = await call('bob', 'POST', `/images/create?fromImage=${encodeURIComponent(`${domain}/bob/app`)}&tag=1`);
      expect({ domain, status: res.status, body: res.json }).toEqual({ domain, status: 403, body: { message: refusal(`${domain}/bob/app:1`, domain) } });
    }
    expect(service.reached).toBe(before);
  });

  test('cloud metadata (169.254.169.254) and link-local IPv6 are refused the same way', async () => {
    for (const domain of ['169.254.169.254', '169.254.169.254:80', '[fe80::1]:5000']) {
      const res = await call('bob', 'POST', `/images/create?fromImage=${encodeURIComponent(`${domain}/bob/app`)}&tag=1`);
      expect({ domain, status: res.status, body: res.json }).toEqual({ domain, status: 403, body: { message: refusal(`${domain}/bob/app:1`, domain) } });
    }
  });

  test('a build\'s FROM of a loopback registry fails naming the reference; nothing connects', async () => {
    const domain = `127.0.0.1:${await service.port}`;
    const before = service.reached;
    const res = await call('bob', 'POST', '/build', await contextOf(`FROM ${domain}/bob/base\n`));
    const error = res.body.toString().split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as { error?: string }).find((l) => l.error)?.error;
    expect(error).toBe(refusal(`${domain}/bob/base:latest`, domain));
    expect(service.reached).toBe(before);
  });

  test('docker push to a loopback registry is a 403 naming the reference; nothing connects', async () => {
    const domain = `127.0.0.1:${await service.port}`;
    expect((await call('bob', 'POST', `/images/busybox/tag?repo=${domain}/bob/app&tag=1`)).status).toBe(201);
    const before = service.reached;
    const res = await call('bob', 'POST', `/images/${domain}/bob/app/push?tag=1`, undefined);
    expect({ status: res.status, body: res.json }).toEqual({ status: 403, body: { message: refusal(`${domain}/bob/app:1`, domain) } });
    expect(service.reached).toBe(before);
  });

  test('the administrator pulls from any host (the loopback service is service.reached)', async () => {
    const domain = `127.0.0.1:${await service.port}`;
    const before = service.reached;
    const res = await call('alice', 'POST', `/images/create?fromImage=${domain}/library/app&tag=1`);
    expect(res.status).not.toBe(403);
    expect(service.reached).toBeGreaterThan(before);
  });
});

describe('registryHosts: the registry hosts a tenant may name, checked once', () => {
  test('with a list, only its hosts (any service.port without one, that service.port with one); Docker Hub is docker.io', () => {
    const allowed = [{ host: 'registry.example.com' }, { host: '127.0.0.1', port: '5000' }, { host: 'docker.io' }];
    expect(registryHostRefusal('registry.example.com:443/bob/a:1', allowed)).toBeUndefined();
    expect(registryHostRefusal('127.1:5000/bob/a:1', allowed)).toBeUndefined();
    expect(registryHostRefusal('bob/a:1', allowed)).toBeUndefined();
    expect(registryHostRefusal('127.0.0.1:5001/bob/a:1', allowed)).toBe('127.0.0.1:5001/bob/a:1: registry 127.0.0.1:5001 is not one of the registry hosts tenants may pull from or push to (registryHosts)');
    expect(registryHostRefusal('evil.example.com/bob/a:1', allowed)).toMatch(/^evil\.example\.com\/bob\/a:1: registry evil\.example\.com is not one/);
  });
  test('without one, public hosts pass and a DNS name is taken as written', () => {
    expect(registryHostRefusal('registry.example.com/bob/a:1', undefined)).toBeUndefined();
    expect(registryHostRefusal('bob/a:1', undefined)).toBeUndefined();
    expect(registryHostRefusal('10.0.0.5:5000/bob/a:1', undefined)).toBeUndefined();
    expect(registryHostRefusal('app.localhost:5000/bob/a:1', undefined)).toBeDefined();
  });
  test('a malformed list is a TypeError naming the option', () => {
    expect(() => imageNamePolicy({ registryHosts: ['http://x/'] })).toThrow('imageNamePolicy option "registryHosts" must be a list of registry hosts');
    expect(() => imageNamePolicy({ registryHosts: 'x' as unknown as string[] })).toThrow(TypeError);
  });
});
