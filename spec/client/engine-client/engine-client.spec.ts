import { describe, test, expect, afterAll } from '@jest/globals';
import { EngineClient, EngineClientError, ENGINE_CLIENT_API_VERSION } from '../../../lib/client/engine-client/index.js';
import { listenOnSocket, testRuntime } from '../../engine/helpers.js';

const servers = [listenOnSocket(testRuntime().runtime, '1.12-1.28'), listenOnSocket(testRuntime().runtime, '1.12-1.43'), listenOnSocket(testRuntime().runtime, '1.42-1.43')];
afterAll(async () => {
  for (const s of servers) await (await s).close();
});

describe('EngineClient picks its API version: env, then constructor, then negotiation', () => {
  test('negotiation takes the lower of the daemon maximum and the client\'s own', async () => {
    const old = new EngineClient({ socketPath: (await servers[0]!).socket, env: {} });
    expect(await old.connect()).toBe('1.28');
    const recent = new EngineClient({ socketPath: (await servers[1]!).socket, env: {} });
    expect(await recent.connect()).toBe(ENGINE_CLIENT_API_VERSION);
    expect(recent.version).toBe('1.41');
    old.close();
    recent.close();
  });
  test('the constructor version is used without negotiating down', async () => {
    const c = new EngineClient({ socketPath: (await servers[1]!).socket, version: '1.25', env: {} });
    expect(await c.connect()).toBe('1.25');
    c.close();
  });
  test('ENGINE_API_VERSION wins, even when the daemon supports newer', async () => {
    const c = new EngineClient({ socketPath: (await servers[1]!).socket, version: '1.25', env: { ENGINE_API_VERSION: '1.24' } });
    expect(await c.connect()).toBe('1.24');
    c.close();
  });
  test('a daemon whose minimum is above the client\'s version is refused', async () => {
    const c = new EngineClient({ socketPath: (await servers[2]!).socket, env: {} });
    await expect(c.connect()).rejects.toBeInstanceOf(EngineClientError);
    await expect(c.connect()).rejects.toThrow(/its minimum API version is 1.42/);
    c.close();
  });
  test('a malformed version is a TypeError at construction', () => {
    expect(() => new EngineClient({ version: 'v1.41' })).toThrow(TypeError);
    expect(() => new EngineClient({ env: { ENGINE_API_VERSION: 'latest' } })).toThrow(/ENGINE_API_VERSION/);
  });
});

describe('EngineClient drives create, start, wait and logs (demultiplexed)', () => {
  test('round trip on the negotiated version', async () => {
    const c = new EngineClient({ socketPath: (await servers[0]!).socket, env: {} });
    const { Id } = await c.createContainer({ Image: 'fail:1' }, { name: 'client-rt' });
    await c.start(Id);
    expect(await c.wait(Id, 'next-exit')).toEqual({ StatusCode: 3, Error: null });
    const out = await c.logs(Id);
    expect(out.stdout.toString()).toBe('out\n');
    expect(out.stderr.toString()).toBe('err\n');
    await c.remove(Id);
    await expect(c.start(Id)).rejects.toMatchObject({ status: 404, message: `No such container: ${Id}` });
    c.close();
  });
});
