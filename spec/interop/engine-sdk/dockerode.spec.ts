import { test, expect, afterAll } from '@jest/globals';
import Docker from 'dockerode';
import { existsSync } from 'node:fs';
import { describeWithPeers, type PeerCheck } from '../../support/peers.js';
import { FrameDecoder } from '../../../lib/engine/index.js';
import { processRuntime } from '../../../lib/engine/runtime/process/index.js';
import { listenOnSocket } from '../../engine/helpers.js';

const busybox: PeerCheck = { name: '/bin/busybox (busybox-static)', available: () => existsSync('/bin/busybox') };

describeWithPeers('dockerode drives create/start/wait/logs through dockgate (process runtime)', [busybox], () => {
  const runtime = processRuntime({ images: { busybox: { program: '/bin/busybox' } } });
  const listening = listenOnSocket(runtime);
  afterAll(async () => {
    await (await listening).close();
    await runtime.close?.();
  });

  for (const version of [undefined, 'v1.24', 'v1.28']) {
    test(`create, start, wait, logs, remove (version option ${version ?? 'unset: newest'})`, async () => {
      const docker = new Docker({ socketPath: (await listening).socket, ...(version ? { version } : {}) });
      const container = await docker.createContainer({ Image: 'busybox', Cmd: ['sh', '-c', 'echo hi; echo oops >&2; exit 2'], name: `dg-node-${version ?? 'x'}` });
      await container.start();
      expect(await container.wait()).toEqual({ StatusCode: 2, Error: null });
      const buf = (await container.logs({ stdout: true, stderr: true, follow: false })) as unknown as Buffer;
      const frames = new FrameDecoder().push(buf).map((f) => [f.stream, f.payload.toString()]);
      expect(frames).toEqual([[1, 'hi\n'], [2, 'oops\n']]);
      const info = await container.inspect();
      expect(info.State.ExitCode).toBe(2);
      await container.remove();
      await expect(container.inspect()).rejects.toMatchObject({ statusCode: 404 });
    });
  }
  test('dockerode sees the version gate as an error with dockerd\'s message', async () => {
    const docker = new Docker({ socketPath: (await listening).socket, version: 'v1.29' });
    await expect(docker.listContainers()).rejects.toMatchObject({ statusCode: 400, json: { message: 'client version 1.29 is too new. Maximum supported API version is 1.28' } });
  });
  test('docker.run (attach over upgrade, Tty) prints the output', async () => {
    const docker = new Docker({ socketPath: (await listening).socket });
    const chunks: Buffer[] = [];
    const { PassThrough } = await import('node:stream');
    const sink = new PassThrough();
    sink.on('data', (c: Buffer) => chunks.push(c));
    const [data] = (await docker.run('busybox', ['echo', 'from run'], sink)) as [{ StatusCode: number }];
    expect(data.StatusCode).toBe(0);
    expect(Buffer.concat(chunks).toString()).toBe('from run\n');
  });
});
