import { describe, expect, test } from '@jest/globals';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mappedOwners } from '../../../lib/engine/runtime/sandbox/userns/mapped-owners.js';
import { mountPointArgs } from '../../../lib/engine/runtime/sandbox/userns/enter-mapped.js';
import { RootlessUserns, subordinateRange } from '../../../lib/engine/runtime/sandbox/userns/rootless-userns.js';
import type { CommandResult } from '../../../lib/engine/linux/off-loop-command.js';

const app = { uid: 1001, gid: 1001, name: 'app' };
const tools = { unshare: 'unshare', nsenter: 'nsenter', setpriv: 'setpriv', newuidmap: 'newuidmap', newgidmap: 'newgidmap' };
const tmp = (): string => mkdtempSync(join(tmpdir(), 'dockgate-rootless-map-'));

/** A namespace over `count` ids whose commands are recorded, not run (what the store asks of it is the subject here). */
function recording(count: number, size?: number): { ns: RootlessUserns; ran: { argv: readonly string[]; input?: string }[] } {
  const dir = tmp();
  const ns = new RootlessUserns(app, { uid: 100000, gid: 200000, count }, tools, dir, join(dir, 'owner-ranges.json'), size);
  const ran: { argv: readonly string[]; input?: string }[] = [];
  ns.run = async (argv, input) => {
    ran.push({ argv, ...(input === undefined ? {} : { input }) });
    return { code: 0, signal: null, stdout: '', stderr: '' } satisfies CommandResult;
  };
  return { ns, ran };
}

describe('the subordinate range is the user\'s entry in both files, the smaller count', () => {
  test('name or uid entries are read; a user with none in either file has no range', () => {
    const dir = tmp();
    writeFileSync(join(dir, 'subuid'), 'other:10:5\napp:100000:65536\n');
    writeFileSync(join(dir, 'subgid'), '1001:200000:4096\n');
    expect(subordinateRange(app, join(dir, 'subuid'), join(dir, 'subgid'))).toEqual({ uid: 100000, gid: 200000, count: 4096 });
    writeFileSync(join(dir, 'none'), 'other:10:5\n');
    expect(subordinateRange(app, join(dir, 'subuid'), join(dir, 'none'))).toBeUndefined();
  });
});

describe('an image\'s recorded owners are given inside the namespace only to entries with directories above them, never through a link', () => {
  test('an owner recorded under a path a later layer made a link is left out; the others are chowned per owner, links not followed', async () => {
    const root = tmp();
    mkdirSync(join(root, 'home', 'u'), { recursive: true });
    writeFileSync(join(root, 'home', 'u', 'secret'), 'x');
    symlinkSync('/etc', join(root, 'x'));
    const { ns, ran } = recording(65536);
    await mappedOwners(ns).apply(root, new Map<string, readonly [number, number]>([
      ['home/u', [1000, 1000]], ['home/u/secret', [1000, 1000]], ['x/passwd', [1000, 1000]], ['gone', [33, 33]], ['', [0, 5]],
    ]));
    expect(ran).toEqual([
      { argv: ['xargs', '-0', '-r', 'chown', '-h', '1000:1000', '--'], input: `${join(root, 'home/u')}\0${join(root, 'home/u/secret')}\0` },
      { argv: ['xargs', '-0', '-r', 'chown', '-h', '0:5', '--'], input: `${root}\0` },
    ]);
  });
});

describe('owners\' ranges: blocks of size - 1 ids of the range, one per owner, root the server\'s user in each', () => {
  test('host ids come back as each block\'s container ids; ids of another block or outside are not the container\'s', () => {
    const { ns } = recording(65536, 4096);
    expect(ns.blocks).toBe(16);
    const first = ns.mappingOf(0);
    const second = ns.mappingOf(1);
    expect([first.containerUid(1001), first.containerUid(100000), first.containerUid(100999), first.containerUid(104094)]).toEqual([0, 1, 1000, 4095]);
    expect([second.containerUid(100999), second.containerUid(104095 + 999), second.containerGid(204095 + 999), second.containerGid(1001)]).toEqual([undefined, 1000, 1000, 0]);
  });
  test('owners get blocks in the order first seen, kept; one beyond the range is a 409 naming /etc/subuid and userns.size', () => {
    const { ns } = recording(65536);
    expect(ns.blocks).toBe(1);
    expect(ns.indexOf({})).toBe(0);
    expect(() => ns.indexOf({ 'dockgate.owner': 'alice' })).toThrow(/no subordinate id range left for owner alice: app's range in \/etc\/subuid .*userns\.size/);
    const { ns: cut } = recording(65536, 4096);
    expect([cut.indexOf({ 'dockgate.owner': 'alice' }), cut.indexOf({ 'dockgate.owner': 'bob' }), cut.indexOf({ 'dockgate.owner': 'alice' })]).toEqual([1, 2, 1]);
  });
  test('a user beyond a block\'s ids is a 400 naming User', () => {
    const { ns } = recording(65536, 4096);
    expect(() => ns.checkUser({ uid: 5000, gid: 0 }, '5000')).toThrow('User "5000": ids above 4095 are outside the container user namespace');
    expect(() => ns.checkUser({ uid: 4095, gid: 4095 }, '4095:4095')).not.toThrow();
  });
});

describe('a non-root user\'s mount points are made first by the namespace\'s root, with bwrap, and nothing else of the launch', () => {
  test('binds stay binds, every other mount is a --dir, and what is not a mount (filters, env, capabilities, fds) is left out', () => {
    expect(mountPointArgs([
      '--args', '5', '--unshare-pid', '--bind', '/s/0', '/', '--proc', '/proc', '--ro-bind', '/dev/null', '/proc/kcore', '--dev', '/dev',
      '--perms', '0700', '--tmpfs', '/run', '--ro-bind', '/s/1', '/data', '--seccomp', '6', '--cap-drop', 'ALL', '--chdir', '/',
    ])).toEqual(['--bind', '/s/0', '/', '--dir', '/proc', '--ro-bind', '/dev/null', '/proc/kcore', '--dir', '/dev', '--dir', '/run', '--ro-bind', '/s/1', '/data']);
  });
});
