/**
 * `POST /containers/{id}/attach` with a JSON body (some SDKs send their attach options there) and
 * `Upgrade: tcp`: dockerd reads the body and discards it; only what comes after it on the
 * connection is the container's stdin. Run the same way against dockerd (the reference) and
 * against dockgate on the sandbox runtime.
 */
import { afterAll, expect, jest, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { describeWithPeers, dockerd, dockerImage, type PeerCheck } from '../../support/peers.js';
import { FrameDecoder, type ContainerRuntime } from '../../../lib/engine/index.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { listenOnSocket, socketRequest } from '../../engine/helpers.js';

jest.setTimeout(60_000);
/** dockerd's offline busybox (PEERS.md); another may be named when that one is damaged on a shared machine. */
const DOCKERD_IMAGE = process.env.DOCKGATE_DOCKERD_IMAGE ?? 'busybox:local';
const hasBwrap = spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox');
const bwrap: PeerCheck = { name: 'bwrap (bubblewrap) and /bin/busybox (busybox-static)', available: () => hasBwrap };

/** An upgraded attach whose request carries `body`, then `input` on the connection; resolves the stdout frames' text once the container's output ends. */
function attachWithBody(socket: string, id: string, body: string, input: string): Promise<{ head: string; stdout: string }> {
  return new Promise((resolve, reject) => {
    const conn = connect(socket);
    const chunks: Buffer[] = [];
    conn.on('data', (c: Buffer) => chunks.push(c));
    conn.on('error', reject);
    conn.on('close', () => {
      const all = Buffer.concat(chunks);
      const split = all.indexOf('\r\n\r\n');
      const frames = new FrameDecoder().push(all.subarray(split + 4));
      resolve({ head: all.subarray(0, split).toString().split('\r\n')[0]!, stdout: frames.filter((f) => f.stream === 1).map((f) => f.payload.toString()).join('') });
    });
    conn.write([
      `POST /v1.41/containers/${id}/attach?stream=1&stdin=1&stdout=1&stderr=1 HTTP/1.1`, 'Host: docker', 'Connection: Upgrade', 'Upgrade: tcp',
      'Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`, '', body,
    ].join('\r\n'));
    // The input follows once the upgrade is answered; closing the write side ends cat's stdin.
    conn.once('data', () => conn.end(input));
  });
}

let sandbox: { runtime: ContainerRuntime; socket: string; close: () => Promise<void> } | undefined;
afterAll(async () => sandbox?.close());

const engines: [string, PeerCheck[], () => Promise<{ socket: string; image: string; network: string }>][] = [
  ['dockerd (the reference)', [dockerd(), dockerImage(DOCKERD_IMAGE)], async () => ({ socket: '/var/run/docker.sock', image: DOCKERD_IMAGE, network: 'none' })],
  ['the sandbox runtime', [bwrap], async () => {
    if (!sandbox) {
      const runtime = sandboxRuntime();
      const listening = await listenOnSocket(runtime, '1.12-1.41');
      sandbox = { runtime, socket: listening.socket, close: async () => { await listening.close(); await runtime.close?.(); } };
    }
    return { socket: sandbox.socket, image: 'busybox', network: 'none' };
  }],
];

for (const [label, peers, open] of engines) {
  describeWithPeers(`an attach request's JSON body is discarded, never the container's stdin (${label})`, peers, () => {
    test('the container reads only what follows the body on the upgraded connection', async () => {
      const e = await open();
      const created = await socketRequest(e.socket, 'POST', '/v1.41/containers/create', {
        Image: e.image, Cmd: ['cat'], OpenStdin: true, StdinOnce: true, AttachStdin: true, AttachStdout: true, AttachStderr: true, HostConfig: { NetworkMode: e.network },
      });
      expect(created.status).toBe(201);
      const id = JSON.parse(created.body.toString()).Id as string;
      try {
        const attached = attachWithBody(e.socket, id, JSON.stringify({ Stream: true, Stdin: true, Stdout: true, Stderr: true, Logs: false }), 'after the body\n');
        await new Promise((r) => setTimeout(r, 300));
        expect((await socketRequest(e.socket, 'POST', `/v1.41/containers/${id}/start`)).status).toBe(204);
        expect(await attached).toEqual({ head: 'HTTP/1.1 101 UPGRADED', stdout: 'after the body\n' });
      } finally {
        await socketRequest(e.socket, 'DELETE', `/v1.41/containers/${id}?force=1`);
      }
    });
  });
}
