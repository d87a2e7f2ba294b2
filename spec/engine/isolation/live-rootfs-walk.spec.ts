import { afterAll, describe, expect, test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hasBwrap } from '../sandbox-socket.js';
import { tenantSandbox } from './support.js';

const it = hasBwrap ? test : test.skip;
const { stateDir, call, start } = tenantSandbox('dockgate-live-walk');

/**
 * A host folder holding files another tenant's container could own (an id of the shared range):
 * `marker`, a name found nowhere else, and `twin`, a name bob's container has too (a tenant
 * that knows another's file name makes its own), whose bytes are found nowhere else.
 */
const target = mkdtempSync('/tmp/dockgate-walk-target-');
afterAll(() => rmSync(target, { recursive: true, force: true }));
const marker = `marker-${randomBytes(6).toString('hex')}`;
const twin = `twin-${randomBytes(6).toString('hex')}`;
const secret = `secret-${randomBytes(12).toString('hex')}`;

const TRIES = 150;
const DEADLINE_MS = 20_000;

/**
 * bob's container swaps its directories /d0 to /d3 for links to the host folder and back, as
 * fast as it can (four loops, four chances per walk): a walk of its root that follows a link at
 * any step lands in the host folder.
 */
async function swapper(): Promise<string> {
  const loop = (d: string) => `mkdir ${d} && echo ${'x'.repeat(secret.length)} > ${d}/${twin} && while true; do mv ${d} ${d}.x; ln -s ${target} ${d}; rm ${d}; mv ${d}.x ${d}; done`;
  const id = await start('bob', { Cmd: ['sh', '-c', `${['/d0', '/d1', '/d2', '/d3'].map((d) => `(${loop(d)}) &`).join(' ')} wait`] });
  // The folder's file as another tenant's: owned by an id of the containers' range (the rootfs copy's owner is its start).
  const { uid, gid } = statSync(join(stateDir, 'overlays', id, 'merged'));
  chmodSync(target, 0o755);
  for (const [name, text] of [[marker, 'host\n'], [twin, `${secret}\n`]] as const) {
    writeFileSync(join(target, name), text, { mode: 0o644 });
    chownSync(join(target, name), uid + 1000, gid + 1000);
  }
  return id;
}

describe('docker diff and docker commit --pause=false never follow a link a running container swaps in', () => {
  it('docker diff, again and again while the container swaps its directories for links to a host folder, never lists a path of that folder', async () => {
    const id = await swapper();
    const began = Date.now();
    let tries = 0;
    let leaked: string | undefined;
    try {
      for (; tries < TRIES && Date.now() - began < DEADLINE_MS && leaked === undefined; tries++) {
        const diff = await call('bob', 'GET', `/containers/${id}/changes`);
        expect(diff.status).toBe(200);
        const path = ((diff.json ?? []) as { Path: string }[]).find((c) => c.Path.includes(marker))?.Path;
        if (path !== undefined) leaked = `${path} listed by diff ${tries + 1}`;
      }
    } finally {
      await call('bob', 'DELETE', `/containers/${id}?force=1`);
    }
    expect(leaked).toBeUndefined();
    expect(tries).toBeGreaterThan(0);
  }, 60_000);

  it('docker commit --pause=false, again and again while the container swaps its directories, never puts the host folder\'s file in the image', async () => {
    const id = await swapper();
    const began = Date.now();
    let tries = 0;
    let leaked: string | undefined;
    const failures: string[] = [];
    try {
      for (; tries < TRIES && Date.now() - began < DEADLINE_MS && leaked === undefined; tries++) {
        const committed = await call('bob', 'POST', `/commit?container=${id}&pause=0`);
        // The tree changes under the commit; it may never succeed with the host's file.
        if (committed.status !== 201) {
          failures.push(`${committed.status} ${committed.json?.message}`);
          continue;
        }
        const image = committed.json.Id as string;
        const saved = await call('bob', 'GET', `/images/${image}/get`);
        expect(saved.status).toBe(200);
        if (saved.body.includes(marker) || saved.body.includes(secret)) leaked = `image ${image} after ${tries + 1} commits (${failures.length} failed)`;
        await call('alice', 'DELETE', `/images/${image}`);
      }
    } finally {
      await call('bob', 'DELETE', `/containers/${id}?force=1`);
    }
    expect(leaked).toBeUndefined();
    // Nor does a commit fail for it: what changed under the walk is left out, not an error.
    expect(failures).toEqual([]);
    expect(tries).toBeGreaterThan(0);
  }, 60_000);
});
