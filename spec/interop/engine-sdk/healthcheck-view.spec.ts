import { afterAll, beforeAll, expect, jest, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describeWithPeers, dockerd, dockerImage, type PeerCheck } from '../../support/peers.js';
import type { ContainerRuntime } from '../../../lib/engine/index.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { listenOnSocket, socketRequest } from '../../engine/helpers.js';

// docker-compose 1.29.2's test_up_with_healthcheck: compose sends `StartPeriod: null` (and 0s
// it was not given), and reads Config.Healthcheck back expecting dockerd's answer, where the
// HealthConfig's zero and null fields are left out (omitempty). The same create and inspect on
// dockerd (the reference) and on the sandbox runtime, which echoed the body as sent.
jest.setTimeout(120_000);
const DOCKERD_IMAGE = process.env.DOCKGATE_DOCKERD_IMAGE ?? 'busybox:local';
const bwrap: PeerCheck = { name: 'bwrap (bubblewrap) and /bin/busybox (busybox-static)', available: () => spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox') };
const SENT = { Test: ['CMD', '/bin/true'], Interval: 1_000_000_000, Timeout: 0, Retries: 1, StartPeriod: null };

async function echoed(socket: string, image: string): Promise<unknown> {
  const made = await socketRequest(socket, 'POST', '/v1.41/containers/create', { Image: image, Cmd: ['sleep', '1'], Healthcheck: SENT });
  expect(made.status).toBe(201);
  const id = (JSON.parse(made.body.toString()) as { Id: string }).Id;
  try {
    const ins = await socketRequest(socket, 'GET', `/v1.41/containers/${id}/json`);
    return (JSON.parse(ins.body.toString()) as { Config: { Healthcheck: unknown } }).Config.Healthcheck;
  } finally {
    await socketRequest(socket, 'DELETE', `/v1.41/containers/${id}?force=1`);
  }
}

const engines: [string, PeerCheck[], () => Promise<{ seen: unknown; close?: () => Promise<void> }>][] = [
  ['dockerd (the reference)', [dockerd(), dockerImage(DOCKERD_IMAGE)], async () => ({ seen: await echoed('/var/run/docker.sock', DOCKERD_IMAGE) })],
  ['the sandbox runtime', [bwrap], async () => {
    const runtime: ContainerRuntime = sandboxRuntime();
    const listening = await listenOnSocket(runtime, '1.12-1.41');
    return { seen: await echoed(listening.socket, 'busybox'), close: async () => { await listening.close(); await runtime.close?.(); } };
  }],
];

for (const [label, peers, open] of engines) {
  describeWithPeers(`container inspect on ${label}: Config.Healthcheck leaves out the zero and null durations, as dockerd's omitempty`, peers, () => {
    let seen: unknown;
    let close: (() => Promise<void>) | undefined;
    beforeAll(async () => ({ seen, close } = await open()));
    afterAll(async () => close?.());
    test('Test, a nonzero Interval and Retries are shown; Timeout 0 and StartPeriod null are not', () => {
      expect(seen).toEqual({ Test: ['CMD', '/bin/true'], Interval: 1_000_000_000, Retries: 1 });
    });
  });
}
