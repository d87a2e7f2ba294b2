/**
 * The odd inputs whose answer is dockerd's to define: the same request to dockerd 20.10 (API
 * 1.12-1.41) and to dockgate with the same range gets the same status and message.
 */
import { test, expect, afterAll } from '@jest/globals';
import { dockerd, describeWithPeers } from '../support/peers.js';
import { scriptedRuntime } from '../../lib/engine/runtime/scripted/index.js';
import { listenOnSocket, socketRequest } from '../engine/helpers.js';

const DOCKERD = '/var/run/docker.sock';

function message(res: { headers: Record<string, unknown>; body: Buffer }): string {
  const text = res.body.toString().trim();
  return res.headers['content-type'] === 'application/json' ? (JSON.parse(text) as { message: string }).message : text;
}

describeWithPeers('odd version prefixes and paths answer as dockerd 20.10 does', [dockerd(DOCKERD)], () => {
  const gate = listenOnSocket(scriptedRuntime({ images: { 'busybox:latest': () => ({}) } }), '1.12-1.41');
  afterAll(async () => {
    await (await gate).close();
  });
  const paths = [
    '/v9999999999999999999.1/version',
    '/v1.99999999999999999999/version',
    '/v1.280/version',
    '/v1.28.0/containers/nope-dockgate/json',
    '/v01.28/containers/nope-dockgate/json',
    '/v.../version',
    '/v1.41/containers/a%00b/json',
    '/v1.41/containers/%E2%82%AC/json',
  ];
  for (const path of paths) {
    test(`GET ${path}: same status, Content-Type kind and message`, async () => {
      const { socket } = await gate;
      const [real, ours] = await Promise.all([socketRequest(DOCKERD, 'GET', path), socketRequest(socket, 'GET', path)]);
      expect(ours.status).toBe(real.status);
      expect(String(ours.headers['content-type']).split(';')[0]).toBe(String(real.headers['content-type']).split(';')[0]);
      expect(message(ours)).toBe(message(real));
    });
  }
  test('GET /v1.41/containers/%ZZ/json: 400 from both (dockerd\'s Go server in plain text, dockgate in the engine shape)', async () => {
    const { socket } = await gate;
    const [real, ours] = await Promise.all([socketRequest(DOCKERD, 'GET', '/v1.41/containers/%ZZ/json'), socketRequest(socket, 'GET', '/v1.41/containers/%ZZ/json')]);
    expect(real.status).toBe(400);
    expect(ours.status).toBe(400);
    expect(ours.headers['content-type']).toBe('application/json');
  });
});
