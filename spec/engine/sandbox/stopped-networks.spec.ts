/**
 * A container's networks while it does not run, and what its start needs of them: dockerd keeps a
 * created or exited container's networks in `NetworkSettings.Networks` (docker-py and
 * testcontainers read `Networks[name]` right after a create), keeps a network connected to a
 * stopped container by name after that network is removed (its start is then 404 naming it until
 * a network of that name exists again), and a `--network container:X` start refused because X is
 * gone leaves nothing behind. Checked side by side with dockerd through the same routes where
 * dockerd shows the same thing.
 */
import { afterAll, expect, test } from '@jest/globals';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import type { Express } from 'express';
import type { ContainerRuntime } from '../../../lib/engine/index.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { dockerRuntime } from '../../../lib/engine/runtime/docker/index.js';
import { describeWithPeers, dockerd, dockerImage, type PeerCheck } from '../../support/peers.js';
import { testApp } from '../helpers.js';

const sandboxPeers: PeerCheck[] = [
  { name: 'bwrap (Debian bubblewrap) and /bin/busybox (busybox-static)', available: () => spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox') },
  { name: 'root with iproute2 (user-defined networks make network namespaces)', available: () => process.getuid?.() === 0 && spawnSync('ip', ['-V']).status === 0 },
];

type Made = { runtime: ContainerRuntime; image: string; dispose?: () => void };

/** One app per describe, made at its first test (after the peers were checked). */
function lazyApp(make: () => Made): { app: () => Express; made: () => Made | undefined; close: () => Promise<void> } {
  let made: Made | undefined;
  let app: Express | undefined;
  return {
    app: () => {
      if (!made) {
        made = make();
        app = testApp(made.runtime, '1.24-1.41');
      }
      return app!;
    },
    made: () => made,
    close: async () => {
      await made?.runtime.close?.();
      made?.dispose?.();
    },
  };
}

/** dockerd's endpoint values while the container does not run. */
const NOT_RUNNING = {
  IPAMConfig: null, Links: null, EndpointID: '', Gateway: '', IPAddress: '', IPPrefixLen: 0,
  IPv6Gateway: '', GlobalIPv6Address: '', GlobalIPv6PrefixLen: 0, MacAddress: '', DriverOpts: null,
};

/** The app under test, a network name and a container name for one describe; both are removed after it. */
function networkFixture(prefix: string, title: string, make: () => Made) {
  const t = lazyApp(make);
  const net = `${prefix}-${process.pid}-${title.length}`;
  const name = `${net}-c`;
  afterAll(async () => {
    if (!t.made()) return;
    await request(t.app()).delete(`/v1.41/containers/${name}?force=1`);
    await request(t.app()).delete(`/v1.41/networks/${net}`);
    await t.close();
  });
  return { t, net, name };
}

/** `NetworkSettings.Networks` of the container's row in `GET /containers/json?all=1` (what `docker ps -a` shows as Networks). */
async function listedNetworks(api: Express, name: string): Promise<unknown> {
  const list = await request(api).get('/v1.41/containers/json').query({ all: 1 });
  expect(list.status).toBe(200);
  const rows = list.body as { Names: string[]; NetworkSettings: { Networks: unknown } }[];
  return rows.find((r) => r.Names.includes(`/${name}`))?.NetworkSettings.Networks;
}

function stoppedNetworksRule(title: string, peers: PeerCheck[], make: () => Made): void {
  describeWithPeers(`${title}: a created or exited container on a user-defined network shows it in NetworkSettings.Networks (inspect, and docker ps without aliases) with every live value empty`, peers, () => {
    const { t, net, name } = networkFixture('dg-stopped', title, make);

    test('created: the network is there with the aliases given, no NetworkID, and the top-level fields are empty', async () => {
      const api = t.app();
      expect((await request(api).post('/v1.41/networks/create').send({ Name: net })).status).toBe(201);
      const created = await request(api).post(`/v1.41/containers/create?name=${name}`).send({
        Image: t.made()!.image, Cmd: ['true'], HostConfig: { NetworkMode: net }, NetworkingConfig: { EndpointsConfig: { [net]: { Aliases: ['web'] } } },
      });
      expect(created.status).toBe(201);
      const settings = (await request(api).get(`/v1.41/containers/${name}/json`)).body.NetworkSettings;
      expect(settings).toEqual({
        Bridge: '', SandboxID: '', HairpinMode: false, LinkLocalIPv6Address: '', LinkLocalIPv6PrefixLen: 0, Ports: {}, SandboxKey: '',
        SecondaryIPAddresses: null, SecondaryIPv6Addresses: null, EndpointID: '', Gateway: '', GlobalIPv6Address: '', GlobalIPv6PrefixLen: 0,
        IPAddress: '', IPPrefixLen: 0, IPv6Gateway: '', MacAddress: '',
        Networks: { [net]: { ...NOT_RUNNING, Aliases: ['web'], NetworkID: '' } },
      });
      // docker ps -a: the same entry, without the aliases.
      expect(await listedNetworks(api, name)).toEqual({ [net]: { ...NOT_RUNNING, Aliases: null, NetworkID: '' } });
    });

    test('exited: the network is there with its id, the short id among the aliases, and no address', async () => {
      const api = t.app();
      expect((await request(api).post(`/v1.41/containers/${name}/start`)).status).toBe(204);
      expect((await request(api).post(`/v1.41/containers/${name}/wait`)).body.StatusCode).toBe(0);
      const view = (await request(api).get(`/v1.41/containers/${name}/json`)).body;
      const netId = (await request(api).get(`/v1.41/networks/${net}`)).body.Id;
      expect(view.NetworkSettings.Networks).toEqual({ [net]: { ...NOT_RUNNING, Aliases: ['web', view.Id.slice(0, 12)], NetworkID: netId } });
      expect(view.NetworkSettings).toMatchObject({ Ports: {}, EndpointID: '', IPAddress: '', Gateway: '', MacAddress: '' });
      expect(await listedNetworks(api, name)).toEqual({ [net]: { ...NOT_RUNNING, Aliases: null, NetworkID: netId } });
    });
  });
}

function connectedThenRemovedRule(title: string, peers: PeerCheck[], make: () => Made): void {
  describeWithPeers(`${title}: a network connected to a stopped container and then removed makes its start 404 naming it, until a network of that name exists again`, peers, () => {
    const { t, net, name } = networkFixture('dg-conn', title, make);

    test('connected while created, the network removed: the start is 404, the container stays created with exit code 128 and still lists the network', async () => {
      const api = t.app();
      expect((await request(api).post('/v1.41/networks/create').send({ Name: net })).status).toBe(201);
      const created = await request(api).post(`/v1.41/containers/create?name=${name}`).send({ Image: t.made()!.image, Cmd: ['true'] });
      expect(created.status).toBe(201);
      expect((await request(api).post(`/v1.41/networks/${net}/connect`).send({ Container: name })).status).toBe(200);
      expect((await request(api).delete(`/v1.41/networks/${net}`)).status).toBe(204);
      const start = await request(api).post(`/v1.41/containers/${name}/start`);
      expect({ status: start.status, body: start.body }).toEqual({ status: 404, body: { message: `network ${net} not found` } });
      const view = (await request(api).get(`/v1.41/containers/${name}/json`)).body;
      expect(view.State).toMatchObject({ Status: 'created', Running: false, ExitCode: 128, Error: `network ${net} not found` });
      expect(view.NetworkSettings.Networks[net]).toEqual({ ...NOT_RUNNING, Aliases: [created.body.Id.slice(0, 12)], NetworkID: '' });
    });

    test('once a network of that name exists again, the container starts and runs to its end', async () => {
      const api = t.app();
      expect((await request(api).post('/v1.41/networks/create').send({ Name: net })).status).toBe(201);
      expect((await request(api).post(`/v1.41/containers/${name}/start`)).status).toBe(204);
      expect((await request(api).post(`/v1.41/containers/${name}/wait`)).body.StatusCode).toBe(0);
      expect((await request(api).get(`/v1.41/containers/${name}/json`)).body.State).toMatchObject({ Status: 'exited', ExitCode: 0, Error: '' });
    });
  });
}

function predefinedModesRule(title: string, peers: PeerCheck[], make: () => Made): void {
  describeWithPeers(`${title}: a created or exited container in a predefined network mode shows that network (default: bridge), its NetworkID once it ran; in another container's namespace, none`, peers, () => {
    const t = lazyApp(make);
    const prefix = `dg-predef-${process.pid}-${title.length}`;
    afterAll(async () => {
      if (!t.made()) return;
      for (const s of ['default', 'none', 'host', 'joiner', 'target']) await request(t.app()).delete(`/v1.41/containers/${prefix}-${s}?force=1`);
      await t.close();
    });

    test.each([['default', 'bridge', undefined], ['none', 'none', 'none'], ['host', 'host', 'host']] as const)(
      'created with NetworkMode %s: Networks holds %s with no NetworkID, in inspect and (aliases null) in docker ps',
      async (label, network, mode) => {
        const api = t.app();
        const name = `${prefix}-${label}`;
        const created = await request(api).post(`/v1.41/containers/create?name=${name}`).send({ Image: t.made()?.image ?? 'busybox', Cmd: ['true'], ...(mode ? { HostConfig: { NetworkMode: mode } } : {}) });
        expect(created.status).toBe(201);
        const expected = { [network]: { ...NOT_RUNNING, Aliases: null, NetworkID: '' } };
        expect((await request(api).get(`/v1.41/containers/${name}/json`)).body.NetworkSettings.Networks).toEqual(expected);
        expect(await listedNetworks(api, name)).toEqual(expected);
      },
    );

    test.each(['none', 'host'])('exited after running with --network %s: the entry carries that network\'s id', async (mode) => {
      const api = t.app();
      const name = `${prefix}-${mode}`;
      expect((await request(api).post(`/v1.41/containers/${name}/start`)).status).toBe(204);
      expect((await request(api).post(`/v1.41/containers/${name}/wait`)).body.StatusCode).toBe(0);
      const netId = (await request(api).get(`/v1.41/networks/${mode}`)).body.Id as string;
      expect(netId).toMatch(/^[0-9a-f]{64}$/);
      const expected = { [mode]: { ...NOT_RUNNING, Aliases: null, NetworkID: netId } };
      expect((await request(api).get(`/v1.41/containers/${name}/json`)).body.NetworkSettings.Networks).toEqual(expected);
      expect(await listedNetworks(api, name)).toEqual(expected);
    });

    test('created in another container\'s network namespace: Networks is empty', async () => {
      const api = t.app();
      const image = t.made()?.image ?? 'busybox';
      const target = await request(api).post(`/v1.41/containers/create?name=${prefix}-target`).send({ Image: image, Cmd: ['sleep', '5'] });
      expect(target.status).toBe(201);
      const joiner = await request(api).post(`/v1.41/containers/create?name=${prefix}-joiner`).send({ Image: image, Cmd: ['true'], HostConfig: { NetworkMode: `container:${target.body.Id}` } });
      expect(joiner.status).toBe(201);
      expect((await request(api).get(`/v1.41/containers/${prefix}-joiner/json`)).body.NetworkSettings.Networks).toEqual({});
      expect(await listedNetworks(api, `${prefix}-joiner`)).toEqual({});
    });
  });
}

const sandbox = (): Made => {
  const stateDir = mkdtempSync(join(tmpdir(), 'dockgate-stopped-net-'));
  return { runtime: sandboxRuntime({ stateDir }), image: 'busybox', dispose: () => rmSync(stateDir, { recursive: true, force: true }) };
};
const reference = (): Made => ({ runtime: dockerRuntime({ socketPath: '/var/run/docker.sock' }), image: 'busybox:local' });
const dockerdPeers = (): PeerCheck[] => [dockerd(), dockerImage('busybox:local')];

stoppedNetworksRule('sandbox', sandboxPeers, sandbox);
stoppedNetworksRule('dockerd 20.10 (the reference)', dockerdPeers(), reference);
connectedThenRemovedRule('sandbox', sandboxPeers, sandbox);
connectedThenRemovedRule('dockerd 20.10 (the reference)', dockerdPeers(), reference);
predefinedModesRule('sandbox', sandboxPeers, sandbox);
predefinedModesRule('dockerd 20.10 (the reference)', dockerdPeers(), reference);

describeWithPeers('sandbox: a start refused because its --network container:X is gone leaves no tmpfs mount nor directory behind', sandboxPeers, () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'dockgate-gone-target-'));
  const tmpfsDir = mkdtempSync('/dev/shm/dockgate-gone-target-');
  const runtime = sandboxRuntime({ stateDir, tmpfsDir });
  const app = testApp(runtime, '1.24-1.41');
  const target = `dg-target-${process.pid}`;
  const joiner = `${target}-j`;
  afterAll(async () => {
    await request(app).delete(`/v1.41/containers/${joiner}?force=1`);
    await request(app).delete(`/v1.41/containers/${target}?force=1`);
    await runtime.close?.();
    rmSync(stateDir, { recursive: true, force: true });
    rmSync(tmpfsDir, { recursive: true, force: true });
  });

  test('the start is 404 naming the container id, and neither the mountinfo nor the tmpfs directory has anything of the container', async () => {
    const made = await request(app).post(`/v1.41/containers/create?name=${target}`).send({ Image: 'busybox', Cmd: ['sleep', '60'] });
    expect(made.status).toBe(201);
    expect((await request(app).post(`/v1.41/containers/${target}/start`)).status).toBe(204);
    const joined = await request(app).post(`/v1.41/containers/create?name=${joiner}`).send({
      Image: 'busybox', Cmd: ['true'], HostConfig: { NetworkMode: `container:${target}`, Tmpfs: { '/scratch': 'size=1m' } },
    });
    expect(joined.status).toBe(201);
    expect((await request(app).delete(`/v1.41/containers/${target}?force=1`)).status).toBe(204);
    const start = await request(app).post(`/v1.41/containers/${joiner}/start`);
    // The reference was resolved at create: the start names the id it stored.
    expect({ status: start.status, body: start.body }).toEqual({ status: 404, body: { message: `No such container: ${made.body.Id}` } });
    expect(readFileSync('/proc/self/mountinfo', 'utf8').split('\n').filter((l) => l.includes(tmpfsDir))).toEqual([]);
    expect(existsSync(join(tmpfsDir, joined.body.Id))).toBe(false);
  });
});
