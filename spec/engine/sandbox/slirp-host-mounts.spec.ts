import { expect, test, afterAll } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { slirpCommand } from '../../../lib/engine/runtime/sandbox/network/slirp-command.js';
import { describeWithPeers, program, type PeerCheck } from '../../support/peers.js';

const root: PeerCheck = { name: 'a root server (slirp4netns --enable-sandbox is used as root only)', available: () => process.getuid?.() === 0 };
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/**
 * Runs in a private mount namespace of its own (so no other process on the machine copies its
 * mounts): a shared mount point (as dockerd's /var/lib/docker is) with a tmpfs below it (as an
 * overlay2 `merged` root is), then the slirp4netns command on a fresh network namespace, until it
 * reports ready (its sandbox pivoted and its old root detached). Prints whether the tmpfs is
 * still mounted.
 */
const SCRIPT = `set -e
d=$1; shift
mount --bind "$d" "$d"; mount --make-shared "$d"; mkdir "$d/merged"; mount -t tmpfs canary "$d/merged"
unshare --net sleep 60 & holder=$!
while [ "$(readlink /proc/$holder/ns/net)" = "$(readlink /proc/self/ns/net)" ]; do sleep 0.05; done
"$@" --netns-type=path /proc/$holder/ns/net eth0 3>"$d/ready" >/dev/null 2>&1 & stack=$!
for _ in $(seq 100); do [ -s "$d/ready" ] && break; sleep 0.05; done
sleep 0.3
if mountpoint -q "$d/merged"; then echo mounted; else echo gone; fi
kill $stack $holder; wait 2>/dev/null || true
umount -l "$d/merged" 2>/dev/null || true; umount -l "$d"`;

/** The ARGS slirp-stack.ts gives a root server's stack (its sandbox on), ready on descriptor 3. */
const ARGS = ['--configure', '--mtu=65520', '--disable-host-loopback', '--enable-sandbox', '--enable-seccomp', '--ready-fd=3'];

function underSharedMount(command: [string, string[]]): string {
  const dir = mkdtempSync(join(tmpdir(), 'dockgate-slirp-mounts-'));
  dirs.push(dir);
  const run = spawnSync('unshare', ['--mount', '--', 'sh', '-c', SCRIPT, 'sh', dir, command[0], ...command[1]], { encoding: 'utf8', timeout: 20_000 });
  return `${run.stdout.trim()}${run.stderr.trim() ? ` (${run.stderr.trim()})` : ''}`;
}

describeWithPeers("slirp4netns's sandbox unmounts nothing of the host's (dockerd's container roots below its shared data root stay mounted)", [root, program('slirp4netns'), program('unshare')], () => {
  test("the command the runtime starts slirp4netns with leaves a mount below a shared mount point mounted", () => {
    expect(underSharedMount(slirpCommand('slirp4netns', ARGS))).toBe('mounted');
  });

  test('the cause: slirp4netns 1.2 started as it is, its sandbox detaches that mount in the host namespace too', () => {
    expect(underSharedMount(['slirp4netns', ARGS])).toBe('gone');
  });

  test('without its sandbox (a rootless server), slirp4netns is started as it is', () => {
    expect(slirpCommand('/usr/bin/slirp4netns', ['--configure', 'eth0'])).toEqual(['/usr/bin/slirp4netns', ['--configure', 'eth0']]);
  });
});
