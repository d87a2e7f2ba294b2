import { expect, test } from '@jest/globals';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { describeWithPeers } from '../../support/peers.js';
import { bwrap } from '../sandbox-socket.js';
import { tenantSandbox } from './support.js';

const { stateDir, call, run } = tenantSandbox('dockgate-iso-volrm');

/** Files a tenant leaves in its volume: a synchronous removal of them held the server's only thread for seconds. */
const FILES = 150_000;

describeWithPeers('a volume\'s content is never walked with blocking I/O on the server\'s thread: removing a full volume holds nobody', [bwrap], () => {
  test(`docker volume rm of a volume holding ${FILES} files answers at once, a ping meanwhile too, the event loop never stalls, and the content goes`, async () => {
    expect((await call('bob', 'POST', '/volumes/create', { Name: 'full' })).status).toBe(201);
    const filled = await run('bob', { Cmd: ['sh', '-c', `cd /v && seq 1 ${FILES} | xargs touch && ls | wc -l`], HostConfig: { Binds: ['full:/v'] } });
    expect({ code: filled.code, out: filled.out.trim() }).toEqual({ code: 0, out: String(FILES) });
    expect((await call('bob', 'DELETE', `/containers/${filled.id}`)).status).toBe(204);
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    const began = Date.now();
    const [removed, ping] = await Promise.all([call('bob', 'DELETE', '/volumes/full'), new Promise((r) => setTimeout(r, 50)).then(() => call('carol', 'GET', '/_ping'))]);
    const took = Date.now() - began;
    // The removal in the background is threadpool work: give it the time it needs, the loop still watched.
    for (let i = 0; i < 600 && existsSync(join(stateDir, 'volumes')) && readdirSync(join(stateDir, 'volumes')).length > 0; i++) await new Promise((r) => setTimeout(r, 100));
    loop.disable();
    expect({ removed: removed.status, ping: ping.status }).toEqual({ removed: 204, ping: 200 });
    expect(took).toBeLessThan(500);
    expect(loop.max / 1e6).toBeLessThan(500);
    expect((await call('bob', 'GET', '/volumes/full')).status).toBe(404);
    expect(readdirSync(join(stateDir, 'volumes'))).toEqual([]);
  }, 240_000);
});
