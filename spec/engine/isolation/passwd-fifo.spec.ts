import { describe, expect, test } from '@jest/globals';
import { spawn } from 'node:child_process';
import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { hasBwrap } from '../sandbox-socket.js';
import { tenantSandbox } from './support.js';

const it = hasBwrap ? test : test.skip;
const { stateDir, call, start } = tenantSandbox('dockgate-passwd-fifo');

describe('a container\'s /etc/passwd is never read with blocking I/O: a FIFO there cannot hold the server', () => {
  it('a tenant makes /etc/passwd a FIFO and runs docker exec -u nobody: the exec answers within seconds and the event loop never stalls', async () => {
    const id = await start('bob', { Cmd: ['sh', '-c', 'rm /etc/passwd && mkfifo /etc/passwd && sleep 120'] });
    // Watched from the host side (a `docker cp` probe would itself read the container's passwd).
    const fifo = join(stateDir, 'overlays', id, 'merged', 'etc', 'passwd');
    for (let i = 0; i < 100 && lstatSync(fifo, { throwIfNoEntry: false })?.isFIFO() !== true; i++) await new Promise((r) => setTimeout(r, 100));
    // Before the fix the server's only thread sits in open(2) of the FIFO, and this spec with it:
    // a host process writes to the FIFO after 8 s, so that such a run ends (slowly) instead of hanging.
    const rescuer = spawn('sh', ['-c', `sleep 8; printf 'nobody:x:65534:65534::/:/bin/sh\\n' > '${fifo}'`], { stdio: 'ignore', detached: true });
    try {
      const exec = await call('bob', 'POST', `/containers/${id}/exec`, { Cmd: ['true'], User: 'nobody', AttachStdout: true, AttachStderr: true });
      expect(exec.status).toBe(201);
      const loop = monitorEventLoopDelay({ resolution: 10 });
      loop.enable();
      const began = Date.now();
      const [answer, ping] = await Promise.all([
        call('bob', 'POST', `/exec/${exec.json.Id}/start`, { Detach: false, Tty: false }),
        new Promise((r) => setTimeout(r, 200)).then(() => call('carol', 'GET', '/_ping')),
      ]);
      loop.disable();
      expect(ping.status).toBe(200);
      expect(Date.now() - began).toBeLessThan(5000);
      // The longest the server's thread was held, in ms: a blocking open of the FIFO is seconds.
      expect(loop.max / 1e6).toBeLessThan(1000);
      // A FIFO at /etc/passwd is refused, naming it (a 4xx), never waited on.
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(answer.status).toBeLessThan(500);
      expect(answer.json.message).toContain('/etc/passwd');
    } finally {
      // The rescuer's whole group (its sleep too).
      if (rescuer.pid !== undefined) process.kill(-rescuer.pid, 'SIGKILL');
      await call('bob', 'DELETE', `/containers/${id}?force=1`);
    }
  }, 60_000);
});
