import { test, expect, afterAll } from '@jest/globals';
import { dockerd } from '../../support/peers.js';
import { describeWithPeers } from '../../support/peers.js';
import { dockerRuntime } from '../../../lib/engine/runtime/docker/index.js';
import { listenOnSocket, socketRequest } from '../../engine/helpers.js';

const DOCKERD = '/var/run/docker.sock';

/** The error text a client sees: the JSON message, or the plain-text body (API <= 1.23). */
function message(res: { headers: Record<string, unknown>; body: Buffer }): string {
  const text = res.body.toString().trim();
  return res.headers['content-type'] === 'application/json' ? (JSON.parse(text) as { message: string }).message : text;
}

describeWithPeers('engine version gate answers as dockerd 20.10 does (range 1.12-1.41)', [dockerd(DOCKERD)], () => {
  const runtime = dockerRuntime({ socketPath: DOCKERD });
  const gate = listenOnSocket(runtime, '1.12-1.41');
  afterAll(async () => {
    await runtime.close?.();
    await (await gate).close();
  });

  const cases: [string, string][] = [
    ['GET', '/v1.11/version'],
    ['GET', '/v1.42/version'],
    ['GET', '/v1.99/containers/json'],
    ['GET', '/v./version'],
    ['GET', '/v1.23/containers/nope-dockgate/json'],
    ['GET', '/v1.41/containers/nope-dockgate/json'],
    ['GET', '/vabc/version'],
    ['GET', '/v1.41/nothing'],
    ['GET', '/v1.11/nothing'],
    ['PUT', '/v1.41/containers/json'],
    ['GET', '/v1.41/containers/nope-dockgate/logs'],
    ['POST', '/v1.41/containers/nope-dockgate/start'],
    ['DELETE', '/v1.41/containers/nope-dockgate'],
  ];
  for (const [method, path] of cases) {
    test(`${method} ${path}: same status, Content-Type kind and message`, async () => {
      const { socket } = await gate;
      const [real, ours] = await Promise.all([socketRequest(DOCKERD, method, path), socketRequest(socket, method, path)]);
      expect(ours.status).toBe(real.status);
      expect(String(ours.headers['content-type']).split(';')[0]).toBe(String(real.headers['content-type']).split(';')[0]);
      expect(message(ours)).toBe(message(real));
    });
  }
  test('HEAD /_ping and GET /v1.41/_ping: same status, body and negotiation headers', async () => {
    const { socket } = await gate;
    for (const [method, path] of [['HEAD', '/_ping'], ['GET', '/v1.41/_ping']] as const) {
      const [real, ours] = await Promise.all([socketRequest(DOCKERD, method, path), socketRequest(socket, method, path)]);
      expect(ours.status).toBe(real.status);
      expect(ours.body.toString()).toBe(real.body.toString());
      for (const h of ['api-version', 'ostype', 'docker-experimental', 'cache-control', 'pragma', 'content-type']) expect(ours.headers[h]).toBe(real.headers[h]);
    }
  });
  test('/version: same ApiVersion and MinAPIVersion', async () => {
    const { socket } = await gate;
    const [real, ours] = await Promise.all([socketRequest(DOCKERD, 'GET', '/version'), socketRequest(socket, 'GET', '/version')]);
    const pick = (b: Buffer): unknown => {
      const v = JSON.parse(b.toString()) as { ApiVersion: string; MinAPIVersion: string };
      return [v.ApiVersion, v.MinAPIVersion];
    };
    expect(pick(ours.body)).toEqual(pick(real.body));
  });
});
