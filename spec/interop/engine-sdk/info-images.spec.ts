import { afterAll, beforeAll, expect, jest, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describeWithPeers, dockerd, type PeerCheck } from '../../support/peers.js';
import type { ContainerRuntime } from '../../../lib/engine/index.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { listenOnSocket, socketRequest } from '../../engine/helpers.js';

// docker-py's ListImagesTest.test_images: the distinct IDs of `GET /images/json?all=1` (which
// lists a build's intermediate images) are as many as /info's `Images`, since dockerd counts its
// whole image store. The same requests on dockerd (the reference) and on the sandbox runtime,
// which counted only the images `docker images` shows.
jest.setTimeout(180_000);
const bwrap: PeerCheck = { name: 'bwrap (bubblewrap) and /bin/busybox (busybox-static)', available: () => spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox') };

async function counts(socket: string): Promise<{ listed: number; info: unknown }> {
  const list = await socketRequest(socket, 'GET', '/v1.41/images/json?all=1');
  const info = await socketRequest(socket, 'GET', '/v1.41/info');
  expect([list.status, info.status]).toEqual([200, 200]);
  return { listed: new Set((JSON.parse(list.body.toString()) as { Id: string }[]).map((i) => i.Id)).size, info: (JSON.parse(info.body.toString()) as { Images: unknown }).Images };
}

/** A build context (an uncompressed tar) holding only a Dockerfile of two RUN steps, so the build leaves an intermediate image. */
function context(): Buffer {
  const dockerfile = Buffer.from(`FROM busybox\nRUN echo ${process.pid} > /a\nRUN echo two > /b\n`);
  const header = Buffer.alloc(512);
  header.write('Dockerfile');
  header.write('0000644\0', 100);
  header.write('0000000\0', 108);
  header.write('0000000\0', 116);
  header.write(`${dockerfile.length.toString(8).padStart(11, '0')}\0`, 124);
  header.write('00000000000\0', 136);
  header.write('0', 156);
  header.write('ustar\x0000', 257);
  header.fill(' ', 148, 156);
  let sum = 0;
  for (const b of header) sum += b;
  header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
  const body = Buffer.alloc(Math.ceil(dockerfile.length / 512) * 512);
  dockerfile.copy(body);
  return Buffer.concat([header, body, Buffer.alloc(1024)]);
}

describeWithPeers('image count on dockerd (the reference): /info Images is the distinct IDs of images?all=1', [dockerd()], () => {
  test('the two numbers agree', async () => {
    const { listed, info } = await counts('/var/run/docker.sock');
    expect(info).toBe(listed);
  });
});

describeWithPeers('image count on the sandbox runtime: /info Images is the distinct IDs of images?all=1, a build\'s intermediate images counted', [bwrap], () => {
  let runtime: ContainerRuntime;
  let listening: Awaited<ReturnType<typeof listenOnSocket>>;
  beforeAll(async () => {
    runtime = sandboxRuntime();
    listening = await listenOnSocket(runtime, '1.12-1.41');
  });
  afterAll(async () => {
    await listening.close();
    await runtime.close?.();
  });
  test('after a build of two steps, the two numbers agree and count more than the images docker images shows', async () => {
    const tar = context();
    const built = await new Promise<number>((resolve, reject) => {
      import('node:http').then(({ request }) => {
        const req = request({ socketPath: listening.socket, method: 'POST', path: '/v1.41/build?t=dg-info-images:1&rm=1', headers: { 'Content-Type': 'application/x-tar', 'Content-Length': tar.length } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
        req.end(tar);
      }, reject);
    });
    expect(built).toBe(200);
    const top = await socketRequest(listening.socket, 'GET', '/v1.41/images/json');
    const { listed, info } = await counts(listening.socket);
    expect(listed).toBeGreaterThan((JSON.parse(top.body.toString()) as unknown[]).length);
    expect(info).toBe(listed);
  });
});
