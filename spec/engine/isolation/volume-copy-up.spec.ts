import { afterAll, expect, test } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeWithPeers } from '../../support/peers.js';
import { bwrap } from '../sandbox-socket.js';
import { tenantSandbox } from './support.js';

const engine = tenantSandbox('dockgate-iso-copyup');
const host = mkdtempSync(join(tmpdir(), 'dockgate-host-'));
afterAll(() => rmSync(host, { recursive: true, force: true }));

/** Attempts at the race: each a fresh volume, a planter and a copy. The unfixed server lost within a few. */
const ATTEMPTS = 12;

describeWithPeers('a volume\'s first fill never writes through a link another container plants in it', [bwrap], () => {
  test(`a planter racing the copy-up (${ATTEMPTS} attempts) never reaches a host file`, async () => {
    const victim = join(host, 'victim');
    writeFileSync(victim, 'host bytes\n', { mode: 0o600 });
    const before = statSync(victim);
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const volume = `race${attempt}`;
      expect((await engine.call('bob', 'POST', '/volumes/create', { Name: volume })).status).toBe(201);
      // The planter: a link named as the image's /etc/group, pointing at the host file, made and removed in a tight loop.
      const planter = await engine.start('bob', { Cmd: ['sh', '-c', `while :; do ln -s ${victim} /v/group 2>/dev/null; rm -f /v/group; done`], HostConfig: { Binds: [`${volume}:/v`] } });
      // The victim container: the same volume at /etc, filled from the image at its first start.
      const created = await engine.call('bob', 'POST', '/containers/create', { Image: 'busybox', Cmd: ['true'], HostConfig: { Binds: [`${volume}:/etc`] } });
      expect(created.status).toBe(201);
      const started = await engine.call('bob', 'POST', `/containers/${created.json.Id}/start`);
      expect(started.status).toBeLessThan(500);
      await engine.call('bob', 'POST', `/containers/${created.json.Id}/wait`);
      await engine.call('bob', 'DELETE', `/containers/${planter}?force=1`);
      await engine.call('bob', 'DELETE', `/containers/${created.json.Id}?force=1`);
      const after = statSync(victim);
      expect({ attempt, text: readFileSync(victim, 'utf8'), uid: after.uid, gid: after.gid, mode: after.mode }).toEqual({ attempt, text: 'host bytes\n', uid: before.uid, gid: before.gid, mode: before.mode });
    }
  }, 240_000);
});
