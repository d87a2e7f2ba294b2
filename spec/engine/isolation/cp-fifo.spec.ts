import { describe, expect, test } from '@jest/globals';
import { spawn } from 'node:child_process';
import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pack } from 'tar-stream';
import { hasBwrap } from '../sandbox-socket.js';
import { tenantSandbox, type Answer } from './support.js';

const it = hasBwrap ? test : test.skip;
const { stateDir, call, start } = tenantSandbox('dockgate-cp-fifo');

async function oneFile(name: string, body: string): Promise<Buffer> {
  const archive = pack();
  const chunks: Buffer[] = [];
  const ended = (async () => {
    for await (const c of archive as unknown as AsyncIterable<Buffer>) chunks.push(c);
  })();
  archive.entry({ name, uid: 1234, gid: 1234 }, body);
  archive.finalize();
  await ended;
  return Buffer.concat(chunks);
}

/** `request` while the server's event loop is watched and carol pings it: the answer, how long it took, the longest stall (ms) and the ping's status. */
async function watched(request: () => Promise<Answer>): Promise<{ answer: Answer; took: number; stall: number; ping: number }> {
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const began = Date.now();
  const [answer, ping] = await Promise.all([request(), new Promise((r) => setTimeout(r, 200)).then(() => call('carol', 'GET', '/_ping'))]);
  loop.disable();
  return { answer, took: Date.now() - began, stall: loop.max / 1e6, ping: ping.status };
}

describe('docker cp never reads a container file in the server: a FIFO at /etc/passwd holds neither the server nor the copy', () => {
  it('a tenant makes /etc/passwd a FIFO: HEAD, PUT (with and without copyUIDGID) and GET of its own container still work, the event loop never stalls, and a ping answers meanwhile', async () => {
    const id = await start('bob', { Cmd: ['sh', '-c', 'rm /etc/passwd && mkfifo /etc/passwd && sleep 120'] });
    const fifo = join(stateDir, 'overlays', id, 'merged', 'etc', 'passwd');
    for (let i = 0; i < 100 && lstatSync(fifo, { throwIfNoEntry: false })?.isFIFO() !== true; i++) await new Promise((r) => setTimeout(r, 100));
    // A server that opens the FIFO waits for a writer: a host process writes to it after 8 s, so that such a run ends (slowly) instead of hanging.
    const rescuer = spawn('sh', ['-c', `sleep 8; printf 'root:x:0:0::/root:/bin/sh\\n' > '${fifo}'`], { stdio: 'ignore', detached: true });
    try {
      const head = await watched(() => call('bob', 'HEAD', `/containers/${id}/archive?path=/bin`));
      expect({ status: head.answer.status, ping: head.ping }).toEqual({ status: 200, ping: 200 });
      expect(head.took).toBeLessThan(5000);
      expect(head.stall).toBeLessThan(1000);

      const put = await watched(async () => call('bob', 'PUT', `/containers/${id}/archive?path=/tmp`, await oneFile('a', 'one\n')));
      expect({ status: put.answer.status, ping: put.ping }).toEqual({ status: 200, ping: 200 });
      expect(put.took).toBeLessThan(5000);
      expect(put.stall).toBeLessThan(1000);

      const keep = await watched(async () => call('bob', 'PUT', `/containers/${id}/archive?path=/tmp&copyUIDGID=1`, await oneFile('b', 'two\n')));
      expect({ status: keep.answer.status, ping: keep.ping }).toEqual({ status: 200, ping: 200 });
      expect(keep.took).toBeLessThan(5000);
      expect(keep.stall).toBeLessThan(1000);

      // The image's tar (busybox) looks the owner's name up in the container's own /etc/passwd,
      // inside the container's sandbox: the copy waits for its FIFO there (until the rescuer
      // writes), and the server goes on answering meanwhile.
      const get = await watched(() => call('bob', 'GET', `/containers/${id}/archive?path=/tmp/b`));
      expect({ status: get.answer.status, ping: get.ping }).toEqual({ status: 200, ping: 200 });
      expect(get.stall).toBeLessThan(1000);
      expect(get.answer.body.subarray(0, 1).toString()).toBe('b');
    } finally {
      // The rescuer's whole group (its sleep too), when it has not run yet.
      if (rescuer.pid !== undefined && rescuer.exitCode === null) {
        try {
          process.kill(-rescuer.pid, 'SIGKILL');
        } catch {
          // Gone meanwhile.
        }
      }
      await call('bob', 'DELETE', `/containers/${id}?force=1`);
    }
  }, 60_000);
});
