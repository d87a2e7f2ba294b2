/**
 * `GET /containers/json?filters={"name":[…]}` (`docker ps -f name=…`): dockerd matches each value
 * as a regular expression against the name with and without its leading `/`; a value that is not
 * an expression matches nothing. Checked side by side with dockerd through the same routes.
 * Expressions whose backtracking could hold the event loop are refused by name (a 400).
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import type { Express } from 'express';
import type { ContainerRuntime } from '../../../lib/engine/index.js';
import { dockerRuntime } from '../../../lib/engine/runtime/docker/index.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { describeWithPeers, dockerd, dockerImage, type PeerCheck } from '../../support/peers.js';
import { testApp, testRuntime } from '../helpers.js';

/** Which of the two containers (`<p>-web`, `<p>-web12`) each value finds, as dockerd 20.10 answers on this machine. */
const CASES: [string, string[]][] = [
  ['web', ['web', 'web12']],
  ['^web$', ['web']],
  ['^/web$', ['web']],
  ['/web', ['web', 'web12']],
  ['web.2', ['web12']],
  ['web1[0-9]', ['web12']],
  ['web$', ['web']],
  ['web1?$', ['web']],
  ['^nothing-like-it$', []],
  ['(', []],
];

function nameFilterRule(title: string, peers: PeerCheck[], make: () => { runtime: ContainerRuntime; image: string }): void {
  describeWithPeers(`${title}: a name filter is a regular expression matched against the name with and without its "/"`, peers, () => {
    let made: { runtime: ContainerRuntime; image: string } | undefined;
    let app: Express | undefined;
    const prefix = `dgnf${process.pid}x${title.length}`;
    const api = async (): Promise<Express> => {
      if (!app) {
        made = make();
        app = testApp(made.runtime, '1.24-1.41');
        for (const suffix of ['web', 'web12']) {
          const created = await request(app).post(`/v1.41/containers/create?name=${prefix}-${suffix}`).send({ Image: made.image, Cmd: ['true'] });
          expect(created.status).toBe(201);
        }
      }
      return app;
    };
    afterAll(async () => {
      if (!app) return;
      for (const suffix of ['web', 'web12']) await request(app).delete(`/v1.41/containers/${prefix}-${suffix}?force=1`);
      await made?.runtime.close?.();
    });

    test.each(CASES)('name=%s finds %j', async (value, expected) => {
      const pattern = value.replace('web', `${prefix}-web`);
      const res = await request(await api()).get('/v1.41/containers/json').query({ all: 1, filters: JSON.stringify({ name: [pattern] }) });
      expect(res.status).toBe(200);
      const names = (res.body as { Names: string[] }[]).map((c) => c.Names[0]!.slice(`/${prefix}-`.length)).filter((n) => n.startsWith('web')).sort();
      expect(names).toEqual(expected);
    });
  });
}

nameFilterRule('scripted runtime (LocalRuntime)', [], () => ({ runtime: testRuntime().runtime, image: 'busybox' }));
nameFilterRule('dockerd 20.10 (the reference)', [dockerd(), dockerImage('busybox:local')], () => ({ runtime: dockerRuntime({ socketPath: '/var/run/docker.sock' }), image: 'busybox:local' }));

/** Networks and volumes: the same expressions against the bare name. */
function listNameFilterRule(kind: 'networks' | 'volumes', title: string, peers: PeerCheck[], make: () => { runtime: ContainerRuntime; dispose?: () => void }): void {
  describeWithPeers(`${title}: a ${kind} name filter is a regular expression matched against the name`, peers, () => {
    let made: { runtime: ContainerRuntime; dispose?: () => void } | undefined;
    let app: Express | undefined;
    const prefix = `dgnf${process.pid}${kind[0]}${title.length}`;
    const api = async (): Promise<Express> => {
      if (!app) {
        made = make();
        app = testApp(made.runtime, '1.24-1.41');
        for (const suffix of ['web', 'web12']) expect((await request(app).post(`/v1.41/${kind}/create`).send({ Name: `${prefix}-${suffix}` })).status).toBe(201);
      }
      return app;
    };
    afterAll(async () => {
      if (!app) return;
      for (const suffix of ['web', 'web12']) await request(app).delete(`/v1.41/${kind}/${prefix}-${suffix}`);
      await made?.runtime.close?.();
      made?.dispose?.();
    });

    test.each([['web', ['web', 'web12']], ['^web$', ['web']], ['web.2', ['web12']], ['web1?$', ['web']], ['(', []]] as [string, string[]][])('name=%s finds %j', async (value, expected) => {
      const res = await request(await api()).get(`/v1.41/${kind}`).query({ filters: JSON.stringify({ name: [value.replace('web', `${prefix}-web`)] }) });
      expect(res.status).toBe(200);
      const rows = (kind === 'networks' ? res.body : res.body.Volumes ?? []) as { Name: string }[];
      expect(rows.map((r) => r.Name).filter((n) => n.startsWith(`${prefix}-`)).map((n) => n.slice(prefix.length + 1)).sort()).toEqual(expected);
    });
  });
}

const sandboxPeers: PeerCheck[] = [
  { name: 'bwrap (Debian bubblewrap) and /bin/busybox (busybox-static)', available: () => spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox') },
  { name: 'root with iproute2 (user-defined networks make network namespaces)', available: () => process.getuid?.() === 0 && spawnSync('ip', ['-V']).status === 0 },
];
const sandbox = () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'dockgate-name-filter-'));
  return { runtime: sandboxRuntime({ stateDir }), dispose: () => rmSync(stateDir, { recursive: true, force: true }) };
};
const reference = () => ({ runtime: dockerRuntime({ socketPath: '/var/run/docker.sock' }) });
for (const kind of ['networks', 'volumes'] as const) {
  listNameFilterRule(kind, 'sandbox', sandboxPeers, sandbox);
  listNameFilterRule(kind, 'dockerd 20.10 (the reference)', [dockerd()], reference);
}

describe('a name filter whose backtracking could hold the event loop is a 400 naming it, not a filter that matches something else', () => {
  const app = testApp(testRuntime().runtime, '1.24-1.41');
  test.each(['(a+)+$', 'a|b', 'a{2,}', '.*.*x', 'a+?', 'x^y', 'x$y', '[[:alpha:]]', '(?i)web'])('name=%s', async (value) => {
    const res = await request(app).get('/v1.41/containers/json').query({ all: 1, filters: JSON.stringify({ name: [value] }) });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain(`invalid filter 'name=${value}'`);
  });
  test('a value with one unbounded repeat is taken', async () => {
    const res = await request(app).get('/v1.41/containers/json').query({ all: 1, filters: JSON.stringify({ name: [`^${'a'.repeat(30)}.*b$`] }) });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([]);
  });
});
