/**
 * Under tenancyPolicy networks follow the rule containers follow: a tenant's `docker network ls`
 * shows the predefined networks and its own user-defined ones, another tenant's network does not
 * exist for it (404 `network X not found`, dockerd's words), and the inspect of a predefined
 * network shows in `Containers` only the caller's containers. Administrators see everything.
 * Checked on the sandbox runtime, whose default bridge lists the containers running on it.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tenancyPolicy } from '../../../lib/engine/index.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { describeWithPeers, type PeerCheck } from '../../support/peers.js';
import { admin, as, containerOf, policyApp } from './support.js';

const peers: PeerCheck[] = [
  { name: 'bwrap (Debian bubblewrap) and /bin/busybox (busybox-static)', available: () => spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox') },
  { name: 'root with iproute2 (networks make network namespaces)', available: () => process.getuid?.() === 0 && spawnSync('ip', ['-V']).status === 0 },
];

describeWithPeers('networks under tenancyPolicy (sandbox runtime)', peers, () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'dockgate-net-tenancy-'));
  const runtime = sandboxRuntime({ stateDir });
  const app = policyApp(runtime, tenancyPolicy({ admin }));
  const alices = `dg-alice-${process.pid}`;
  const bobs = `dg-bob-${process.pid}`;
  let aliceNetId = '';
  const names = (rows: { Name: string }[]): string[] => rows.map((n) => n.Name).sort();
  const running: string[] = [];
  beforeAll(async () => {
    const a = await as(app, 'alice').post('/v1.41/networks/create').send({ Name: alices, Labels: { team: 'x' } });
    expect(a.status).toBe(201);
    aliceNetId = a.body.Id as string;
    expect((await as(app, 'bob').post('/v1.41/networks/create').send({ Name: bobs, Labels: { team: 'x' } })).status).toBe(201);
  });
  afterAll(async () => {
    for (const id of running) await as(app, 'root').delete(`/v1.41/containers/${id}?force=1`);
    await as(app, 'root').delete(`/v1.41/networks/${alices}`);
    await as(app, 'root').delete(`/v1.41/networks/${bobs}`);
    await runtime.close?.();
    rmSync(stateDir, { recursive: true, force: true });
  });

  describe("a tenant's network list shows the predefined networks and its own networks only; an administrator's shows all", () => {
    test('alice and bob each see bridge, host, none and their own network', async () => {
      const alice = await as(app, 'alice').get('/v1.41/networks');
      expect(alice.status).toBe(200);
      expect(names(alice.body)).toEqual(['bridge', alices, 'host', 'none'].sort());
      expect(names((await as(app, 'bob').get('/v1.41/networks')).body)).toEqual(['bridge', bobs, 'host', 'none'].sort());
    });

    test("filters still apply, within the tenant's networks: a label both networks carry finds only the caller's", async () => {
      const byLabel = await as(app, 'bob').get('/v1.41/networks').query({ filters: JSON.stringify({ label: ['team=x'] }) });
      expect({ status: byLabel.status, names: names(byLabel.body) }).toEqual({ status: 200, names: [bobs] });
      const byName = await as(app, 'bob').get('/v1.41/networks').query({ filters: JSON.stringify({ name: ['dg-'] }) });
      expect(names(byName.body)).toEqual([bobs]);
      const custom = await as(app, 'alice').get('/v1.41/networks').query({ filters: JSON.stringify({ type: ['custom'] }) });
      expect(names(custom.body)).toEqual([alices]);
    });

    test('the administrator lists both tenants\' networks', async () => {
      expect(names((await as(app, 'root').get('/v1.41/networks')).body)).toEqual(expect.arrayContaining([alices, bobs, 'bridge', 'host', 'none']));
    });
  });

  describe("another tenant's network is 404 `network X not found` to inspect, by name, id or id prefix", () => {
    test('bob cannot inspect alice\'s network; alice and the administrator can', async () => {
      for (const ref of [alices, aliceNetId, aliceNetId.slice(0, 12)]) {
        const res = await as(app, 'bob').get(`/v1.41/networks/${ref}`);
        expect({ status: res.status, body: res.body }).toEqual({ status: 404, body: { message: `network ${ref} not found` } });
      }
      const anonymous = await as(app, undefined).get(`/v1.41/networks/${alices}`);
      expect(anonymous.status).toBe(404);
      expect((await as(app, 'alice').get(`/v1.41/networks/${alices}`)).body).toMatchObject({ Name: alices, Labels: { team: 'x' } });
      expect((await as(app, 'root').get(`/v1.41/networks/${aliceNetId}`)).body).toMatchObject({ Name: alices });
    });
  });

  describe("the inspect of a predefined network shows in Containers only the caller's containers; the administrator's shows all", () => {
    test('alice and bob each run a container on the default bridge: each sees only their own there', async () => {
      const a = await containerOf(app, 'alice', { start: true, cmd: ['sleep', '60'] });
      running.push(a);
      const b = await containerOf(app, 'bob', { start: true, cmd: ['sleep', '60'] });
      running.push(b);
      const seen = async (user: string): Promise<string[]> => {
        const res = await as(app, user).get('/v1.41/networks/bridge');
        expect(res.status).toBe(200);
        return Object.keys(res.body.Containers).sort();
      };
      expect(await seen('alice')).toEqual([a]);
      expect(await seen('bob')).toEqual([b]);
      expect(await seen('root')).toEqual([a, b].sort());
      // API 1.24's list carries each network's containers: narrowed the same way.
      const old = await as(app, 'bob').get('/v1.24/networks').query({ filters: JSON.stringify({ name: ['bridge'] }) });
      expect(Object.keys(old.body.find((n: { Name: string }) => n.Name === 'bridge').Containers)).toEqual([b]);
    });
  });

  describe("a tenant's network prune removes its own unused networks only", () => {
    test("bob's prune removes his network, not alice's", async () => {
      const pruned = await as(app, 'bob').post('/v1.41/networks/prune');
      expect({ status: pruned.status, body: pruned.body }).toEqual({ status: 200, body: { NetworksDeleted: [bobs] } });
      expect((await as(app, 'alice').get(`/v1.41/networks/${alices}`)).status).toBe(200);
    });
  });
});
