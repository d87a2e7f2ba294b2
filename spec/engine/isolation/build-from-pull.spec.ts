import { expect, test } from '@jest/globals';
import { describeWithPeers } from '../../support/peers.js';
import { bwrap } from '../sandbox-socket.js';
import { tenantSandbox, contextOf, countingServer } from './support.js';

const d = (title: string, body: () => void) => describeWithPeers(title, [bwrap], body);
const { call } = tenantSandbox('dockgate-iso-from', { policy: { registryHosts: ['127.0.0.1'] } });

/** A registry endpoint on loopback that counts who reached it (and has no images). */
const registry = countingServer((req, res) => res.writeHead(404, { 'Content-Type': 'application/json' }).end('{"errors":[{"code":"NAME_UNKNOWN"}]}'));


/** The build's error message (its stream's errorDetail), or undefined when it built. */
async function buildError(user: string, dockerfile: string, query = ''): Promise<string | undefined> {
  const res = await call(user, 'POST', `/build?${query}`, await contextOf(dockerfile));
  expect(res.status).toBe(200);
  const lines = res.body.toString().split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as { error?: string });
  return lines.find((l) => l.error !== undefined)?.error;
}

d('a build\'s FROM pull goes through the image-name policy, as docker pull does', () => {
  test('FROM HOST/library/busybox (a shared name) is refused naming it, and the registry is never reached', async () => {
    const host = `127.0.0.1:${await registry.port}`;
    const before = registry.reached;
    expect(await buildError('bob', `FROM ${host}/library/busybox\nRUN true\n`)).toBe(`${host}/library/busybox:latest is not in your namespace (bob/…): only administrators may write it`);
    expect(registry.reached).toBe(before);
    expect((await call('alice', 'GET', `/images/${host}/library/busybox/json`)).status).toBe(404);
  });

  test('pull=1 of FROM busybox does not move the shared tag: refused naming it', async () => {
    const before = (await call('alice', 'GET', '/images/busybox:latest/json')).json.Id as string;
    expect(await buildError('bob', 'FROM busybox\nRUN true\n', 'pull=1')).toBe('busybox:latest is not in your namespace (bob/…): only administrators may write it');
    expect((await call('alice', 'GET', '/images/busybox:latest/json')).json.Id).toBe(before);
  });

  test('his own namespace passes the policy (the pull is tried), and a FROM of a local image pulls nothing', async () => {
    const host = `127.0.0.1:${await registry.port}`;
    const before = registry.reached;
    expect(await buildError('bob', `FROM ${host}/bob/base\n`)).not.toContain('not in your namespace');
    expect(registry.reached).toBeGreaterThan(before);
    expect(await buildError('bob', 'FROM busybox\nRUN true\n')).toBeUndefined();
  });

  test('an administrator\'s FROM pull of a shared name is tried', async () => {
    const host = `127.0.0.1:${await registry.port}`;
    const before = registry.reached;
    expect(await buildError('alice', `FROM ${host}/library/busybox\n`)).not.toContain('namespace');
    expect(registry.reached).toBeGreaterThan(before);
  });
});
