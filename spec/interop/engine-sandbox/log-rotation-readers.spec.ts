import { test, expect, afterAll } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { request, type IncomingMessage } from 'node:http';
import { dirname } from 'node:path';
import { describeWithPeers, type PeerCheck } from '../../support/peers.js';
import { FrameDecoder } from '../../../lib/engine/index.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { lostLine } from '../../../lib/engine/runtime/local/log-reader.js';
import { lazySocket, socketRequest } from '../../engine/helpers.js';

const hasBwrap = spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox');
const bwrap: PeerCheck = { name: 'bwrap (Debian bubblewrap) and /bin/busybox (busybox-static)', available: () => hasBwrap };
const json = (b: Buffer): any => JSON.parse(b.toString());

/** `GET …/logs?follow=1` whose response is paused at once: a client that stopped reading its socket. */
function pausedFollower(socket: string, id: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: socket, method: 'GET', path: `/v1.28/containers/${id}/logs?stdout=1&stderr=1&follow=1` }, (res) => {
      res.pause();
      resolve(res);
    });
    req.on('error', reject);
    req.end();
  });
}

describeWithPeers('log rotation never waits for a reader: a follower that stops reading neither slows the container nor holds a file back', [bwrap], () => {
  const served = lazySocket(() => sandboxRuntime());
  afterAll(() => served.close());
  const socket = served.socket;

  test('8 MB of lines through 256 KiB × 2 files past a paused follower: the container exits on its own, 2 files stay; resumed, the follower is told what rotation deleted, then reads to the last line', async () => {
    const s = await socket();
    const created = await socketRequest(s, 'POST', '/v1.28/containers/create', {
      Image: 'busybox',
      // Written once the follower is there and paused; 8 MB is far past what the socket's buffers hold.
      Cmd: ['sh', '-c', 'sleep 1; yes 0123456789012345678901234567890123456789012345678901234567890 | head -c 8000000; echo; echo last'],
      HostConfig: { LogConfig: { Type: 'json-file', Config: { 'max-size': '256k', 'max-file': '2' } } },
    });
    const id = json(created.body).Id as string;
    try {
      expect((await socketRequest(s, 'POST', `/v1.28/containers/${id}/start`)).status).toBe(204);
      const follower = await pausedFollower(s, id);
      // Before, the paused follower held the oldest file, and the container was paused with it: this wait never came.
      const waited = await Promise.race([
        socketRequest(s, 'POST', `/v1.28/containers/${id}/wait`).then((r) => json(r.body) as { StatusCode: number }),
        new Promise<'blocked'>((resolve) => setTimeout(() => resolve('blocked'), 30_000)),
      ]);
      expect(waited).toEqual({ StatusCode: 0, Error: null });
      const logPath = json((await socketRequest(s, 'GET', `/v1.28/containers/${id}/json`)).body).LogPath as string;
      expect(readdirSync(dirname(logPath)).length).toBeLessThanOrEqual(2);
      // Resumed: what it had, the line saying what it lost, then the rest to the end.
      const decoder = new FrameDecoder();
      const frames: { stream: number; text: string }[] = [];
      follower.on('data', (chunk: Buffer) => frames.push(...decoder.push(chunk).map((f) => ({ stream: f.stream, text: f.payload.toString() }))));
      follower.resume();
      await new Promise((resolve) => follower.once('end', resolve));
      const told = frames.filter((f) => f.stream === 2).map((f) => f.text);
      expect(told.length).toBeGreaterThanOrEqual(1);
      for (const line of told) expect(line).toMatch(new RegExp(`^${lostLine(0).replace('0', '\\d+').replace(/[()/]/g, '\\$&')}\\n$`));
      const out = frames.filter((f) => f.stream === 1).map((f) => f.text).join('');
      expect(out.endsWith('\nlast\n')).toBe(true);
      expect(out.length).toBeLessThan(8_000_000);
    } finally {
      await socketRequest(s, 'DELETE', `/v1.28/containers/${id}?force=1`);
    }
  }, 60_000);
});
