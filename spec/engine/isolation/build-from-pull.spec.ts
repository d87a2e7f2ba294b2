import { afterAll, expect, test } from '@jest/globals';
import { createServer } from 'node:http';
import { pack } from 'tar-stream';
import { describeWithPeers } from '../../support/peers.js';
import { bwrap } from '../sandbox-socket.js';
import { tenantSandbox } from './support.js';

const d = (title: string, body: () => void) => describeWithPeers(title, [bwrap], body);
const { call } = tenantSandbox('dockgate-iso-from', { policy: { registryHosts: ['127.0.0.1'] } });

/** A registry endpoint on loopback that counts who reached it (and has no images). */
const registry = createServer((req, res) => res.writeHead(404, { 'Content-Type': 'application/json' }).end('{"errors":[{"code":"NAME_UNKNOWN"}]}'));
let reached = 0;
registry.on('connection', () => reached++);
const port = new Promise<number>((resolve) => registry.listen(0, '127.0.0.1', () => resolve((registry.address() as { port: number }).port)));
afterAll(() => new Promise((resolve) => registry.close(resolve)));

async function contextOf(dockerfile: string): Promise<Buffer> {
  const archive = pack();
  const chunks: Buffer[] = [];
  const ended = (async () => {
    for await (const c of archive as unknown as AsyncIterable<Buffer>) chunks.push(c);
  })();
  archive.entry({ name: 'Dockerfile' }, dockerfile);
  archive.finalize();
  await ended;
  return Buffer.concat(chunks);
}

/** The build's error message (its stream's errorDetail), or undefined when it built. */
async function buildError(user: string, dockerfile: string, query = ''): Promise<string | undefined> {
  const res = await call(user, 'POST', `/build?${query}`, await contextOf(dockerfile));
  expect(res.status).toBe(200);
  const lines = res.body.toString().split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as { error?: string });
  return lines.find((l) => l.error !== undefined)?.error;
}

d('a build\'s FROM pull goes through the image-name policy, as docker pull does', () => {
  test('FROM HOST/library/busybox (a shared name) is refused naming it, and the registry is never reached', async () => {
    const host = `127.0.0.1:${await port}`;
    const before = reached;
    expect(await buildError('bob', `FROM ${host}/library/busybox\nRUN true\n`)).toBe(`${host}/library/busybox:latest is not in your namespace (bob/…): only administrators may write it`);
    expect(reached).toBe(before);
    expect((await call('alice', 'GET', `/images/${host}/library/busybox/json`)).status).toBe(404);
  });

  test('pull=1 of FROM busybox does not move the shared tag: refused naming it', async () => {
    const before = (await call('alice', 'GET', '/images/busybox:latest/json')).json.Id as string;
    expect(await buildError('bob', 'FROM busybox\nRUN true\n', 'pull=1')).toBe('busybox:latest is not in your namespace (bob/…): only administrators may write it');
    expect((await call('alice', 'GET', '/images/busybox:latest/json')).json.Id).toBe(before);
  });

  test('his own namespace passes the policy (the pull is tried), and a FROM of a local image pulls nothing', async () => {
    const host = `127.0.0.1:${await port}`;
    const before = reached;
    expect(await buildError('bob', `FROM ${host}/bob/base\n`)).not.toContain('not in your namespace');
    expect(reached).toBeGreaterThan(before);
    expect(await buildError('bob', 'FROM busybox\nRUN true\n')).toBeUndefined();
  });

  test('an administrator\'s FROM pull of a shared name is tried', async () => {
    const host = `127.0.0.1:${await port}`;
    const before = reached;
    expect(await buildError('alice', `FROM ${host}/library/busybox\n`)).not.toContain('namespace');
    expect(reached).toBeGreaterThan(before);
  });
});
