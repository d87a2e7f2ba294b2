import { describe, test, expect } from '@jest/globals';
import request from 'supertest';
import { testApp, testRuntime } from '../helpers.js';
import { HOST_CONFIG_DEFAULTS } from '../../../lib/engine/runtime/local/host-config-defaults.js';

// docker-py's container tests read inspect fields back without checking they exist
// (`Config['StopTimeout']`, `HostConfig['Isolation']`, `'MemorySwappiness' in HostConfig`…).
const app = testApp(testRuntime().runtime, '1.24-1.41');

type Inspect = { HostConfig: Record<string, unknown>; Config: Record<string, unknown> } & Record<string, unknown>;

async function inspectOf(body: object): Promise<Inspect> {
  const created = await request(app).post('/v1.41/containers/create').send({ Image: 'busybox', Cmd: ['x'], ...body });
  expect(created.status).toBe(201);
  return (await request(app).get(`/v1.41/containers/${created.body.Id}/json`)).body;
}

describe('a local container\'s inspect has the fields dockerd\'s has, with dockerd\'s unset values', () => {
  test('HostConfig: every field left out of the create body reads as dockerd shows it unset', async () => {
    const { HostConfig } = await inspectOf({});
    expect(HostConfig).toMatchObject({ Isolation: '', GroupAdd: null, Memory: 0, MemorySwap: 0, MemorySwappiness: null, PidsLimit: null, CpuRealtimePeriod: 0, ConsoleSize: [0, 0], Binds: null });
    for (const key of Object.keys(HOST_CONFIG_DEFAULTS)) expect([key, key in HostConfig]).toEqual([key, true]);
  });
  test('HostConfig: what the body set wins; a memory limit without MemorySwap shows twice the memory, as dockerd stores it', async () => {
    const { HostConfig } = await inspectOf({ HostConfig: { Isolation: 'default', Memory: 64 * 1024 * 1024 } });
    expect(HostConfig).toMatchObject({ Isolation: 'default', Memory: 64 * 1024 * 1024, MemorySwap: 128 * 1024 * 1024 });
    const own = (await inspectOf({ HostConfig: { Memory: 64 * 1024 * 1024, MemorySwap: -1 } })).HostConfig;
    expect(own.MemorySwap).toBe(-1);
  });
  test('Config: StopTimeout and StopSignal when set (absent otherwise, as dockerd omits them); Domainname, Volumes, OnBuild always', async () => {
    const set = await inspectOf({ StopTimeout: 25, StopSignal: 'SIGUSR1' });
    expect(set.Config).toMatchObject({ StopTimeout: 25, StopSignal: 'SIGUSR1', Domainname: '', Volumes: null, OnBuild: null });
    const unset = await inspectOf({});
    expect(unset.Config).not.toHaveProperty('StopTimeout');
    expect(unset.Config).not.toHaveProperty('StopSignal');
  });
  test('top level: the host file paths and security labels a local container has none of are empty; GraphDriver names dockgate', async () => {
    const c = await inspectOf({});
    expect(c).toMatchObject({ ResolvConfPath: '', HostnamePath: '', HostsPath: '', MountLabel: '', ProcessLabel: '', AppArmorProfile: '', GraphDriver: { Data: null, Name: 'dockgate' } });
  });
});
