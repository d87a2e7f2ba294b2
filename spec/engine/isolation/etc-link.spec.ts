import { afterAll, describe, expect, test } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { chmodSync, lstatSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hasBwrap } from '../sandbox-socket.js';
import { tenantSandbox } from './support.js';

const it = hasBwrap ? test : test.skip;
const { call, start, run } = tenantSandbox('dockgate-etc-link');

/** A host folder of root's, the kind a link at a container's /etc could name. */
const target = mkdtempSync('/tmp/dockgate-etc-target-');
afterAll(() => rmSync(target, { recursive: true, force: true }));

/** What is in the host folder: each name with its kind and owner. */
function snapshot(): string[] {
  return readdirSync(target).sort().map((name) => {
    const s = lstatSync(join(target, name));
    return `${name} ${s.isSymbolicLink() ? 'link' : s.isFIFO() ? 'fifo' : s.isFile() ? 'file' : 'other'} ${s.uid}:${s.gid} ${s.size}`;
  });
}

describe('a link at a container\'s /etc never points the server at a host folder', () => {
  it('an image whose /etc links to a host folder: starting it makes, removes and reads nothing there, on its own network or a joined one', async () => {
    chmodSync(target, 0o755);
    writeFileSync(join(target, 'passwd'), 'zed:x:4242:4242::/zed:/bin/sh\n');
    writeFileSync(join(target, 'group'), 'zed:x:4242:\n');
    symlinkSync('/nonexistent-dockgate-file', join(target, 'hosts'));
    execFileSync('mkfifo', [join(target, 'resolv.conf')]);
    const before = snapshot();

    // bob's container replaces its /etc with the link, and bob commits it as an image. (Its /etc
    // holds the hostname, hosts and resolv.conf mounts in every network mode, as on dockerd: it
    // cannot be removed, but it can be moved aside.)
    const made = await run('bob', { Cmd: ['sh', '-c', `mv /etc /etc.orig && ln -s ${target} /etc`], HostConfig: { NetworkMode: 'none' } });
    expect(made.code).toBe(0);
    const committed = await call('bob', 'POST', `/commit?container=${made.id}`);
    expect(committed.status).toBe(201);
    const image = committed.json.Id as string;

    // Its own network: /etc/hosts and /etc/resolv.conf mount points. Refused or started, nothing lands in the host folder.
    const own = await call('bob', 'POST', '/containers/create', { Image: image, Cmd: ['true'] });
    expect(own.status).toBe(201);
    const ownStart = await call('bob', 'POST', `/containers/${own.json.Id}/start`);
    expect(snapshot()).toEqual(before);
    if (ownStart.status !== 204) {
      expect([ownStart.status, ownStart.json.message]).toEqual([400, expect.stringContaining('/etc')]);
      expect(ownStart.json.message).toContain('/etc');
      // Refused before anything ran: the container is left as it was, exit code 128 and the error (as dockerd's 400 start refusals).
      const state = (await call('bob', 'GET', `/containers/${own.json.Id}/json`)).json.State;
      expect([state.Status, state.ExitCode, state.Error]).toEqual(['created', 128, ownStart.json.message]);
    }

    // Joining a running container's network: that container's files are bound over /etc too.
    const host = await start('bob', { Cmd: ['sleep', '60'] });
    try {
      const joined = await call('bob', 'POST', '/containers/create', { Image: image, Cmd: ['true'], HostConfig: { NetworkMode: `container:${host}` } });
      expect(joined.status).toBe(201);
      const joinedStart = await call('bob', 'POST', `/containers/${joined.json.Id}/start`);
      expect(snapshot()).toEqual(before);
      if (joinedStart.status !== 204) expect(joinedStart.status).toBeLessThan(500);
    } finally {
      await call('bob', 'DELETE', `/containers/${host}?force=1`);
    }

    // A user named only in the host folder's passwd is not found there: the link is not followed.
    const zed = await call('bob', 'POST', '/containers/create', { Image: image, Cmd: ['true'], User: 'zed' });
    expect(zed.status).toBe(400);
    expect(zed.json.message).toContain('/etc/passwd');
  }, 120_000);
});
