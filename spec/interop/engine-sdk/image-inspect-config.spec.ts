import { afterAll, beforeAll, expect, jest, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describeWithPeers, dockerd, dockerImage, type PeerCheck } from '../../support/peers.js';
import type { ContainerRuntime } from '../../../lib/engine/index.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { listenOnSocket, socketRequest } from '../../engine/helpers.js';

// docker-py's test_build_container_with_target reads `Config.OnBuild` of an image it built, and
// docker-compose 1.29 `ContainerConfig.Volumes` of a service's image when it recreates its container:
// dockerd 20.10 shows an image's Config as a whole container.Config, whose fields without
// omitempty are there even when the image's config blob leaves them out. Image inspect, through
// the same HTTP request, on dockerd (the reference) and on the sandbox runtime.
jest.setTimeout(120_000);
const DOCKERD_IMAGE = process.env.DOCKGATE_DOCKERD_IMAGE ?? 'busybox:local';
const bwrap: PeerCheck = { name: 'bwrap (bubblewrap) and /bin/busybox (busybox-static)', available: () => spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox') };
/** The fields dockerd 20.10's container.Config has without omitempty, read from its image inspect on this machine. */
const ALWAYS = ['Hostname', 'Domainname', 'User', 'AttachStdin', 'AttachStdout', 'AttachStderr', 'Tty', 'OpenStdin', 'StdinOnce', 'Env', 'Cmd', 'Image', 'Volumes', 'WorkingDir', 'Entrypoint', 'OnBuild', 'Labels'];

async function inspect(socket: string, image: string): Promise<Record<string, unknown>> {
  const res = await socketRequest(socket, 'GET', `/v1.41/images/${encodeURIComponent(image)}/json`);
  expect(res.status).toBe(200);
  return JSON.parse(res.body.toString()) as Record<string, unknown>;
}

const engines: [string, PeerCheck[], () => Promise<{ body: Record<string, unknown>; close?: () => Promise<void> }>][] = [
  ['dockerd (the reference)', [dockerd(), dockerImage(DOCKERD_IMAGE)], async () => ({ body: await inspect('/var/run/docker.sock', DOCKERD_IMAGE) })],
  ['the sandbox runtime', [bwrap], async () => {
    const runtime: ContainerRuntime = sandboxRuntime();
    const listening = await listenOnSocket(runtime, '1.12-1.41');
    await socketRequest(listening.socket, 'POST', '/v1.41/images/create?fromImage=busybox&tag=latest');
    return { body: await inspect(listening.socket, 'busybox:latest'), close: async () => { await listening.close(); await runtime.close?.(); } };
  }],
];

for (const [label, peers, open] of engines) {
  describeWithPeers(`image inspect on ${label}: Config is a whole container.Config, as dockerd 20.10 shows it`, peers, () => {
    let body: Record<string, unknown>;
    let config: Record<string, unknown>;
    let close: (() => Promise<void>) | undefined;
    beforeAll(async () => {
      ({ body, close } = await open());
      config = body.Config as Record<string, unknown>;
    });
    afterAll(async () => close?.());

    test('every field dockerd always shows is there; an image without ONBUILD has OnBuild null, Image "" and the Attach flags false', () => {
      expect(ALWAYS.filter((k) => !(k in config))).toEqual([]);
      expect(config).toMatchObject({ OnBuild: null, Image: '', AttachStdin: false, AttachStdout: false, AttachStderr: false, Tty: false, OpenStdin: false, StdinOnce: false, Hostname: '', Domainname: '', User: '', Volumes: null });
    });
    test('Container and ContainerConfig are there, empty for an image no build step made (compose 1.29 reads ContainerConfig when it recreates)', () => {
      expect(body.Container).toBe('');
      const containerConfig = body.ContainerConfig as Record<string, unknown>;
      expect(ALWAYS.filter((k) => !(k in containerConfig))).toEqual([]);
      expect(containerConfig).toMatchObject({ Volumes: null, Cmd: null, Entrypoint: null, OnBuild: null });
    });
  });
}
