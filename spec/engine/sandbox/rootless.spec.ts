import { containerSpecOf } from '../../../lib/engine-api/container-spec.js';
import { describe, expect, test } from '@jest/globals';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cgroups } from '../../../lib/engine/linux/cgroups.js';
import {
  delegationCommand, numericUser, refuseOtherUsers, refusePrivilegedPorts, rootlessNotice, rootlessStateDir, subordinateEntry, undelegatedReason,
} from '../../../lib/engine/runtime/sandbox/rootless.js';

const app = { uid: 1001, gid: 1001, name: 'app' };
const tmp = (): string => mkdtempSync(join(tmpdir(), 'dockgate-rootless-unit-'));

/** Cgroups whose memory hierarchy is mounted where no group can be made (under a file): the controller is found but not ours. */
function undelegatedMemory(): { cgroups: Cgroups; dir: string } {
  const root = tmp();
  const proc = join(root, 'proc');
  mkdirSync(proc);
  const memory = join(root, 'memory');
  writeFileSync(memory, '');
  writeFileSync(join(proc, 'mountinfo'), `30 25 0:26 / ${memory} rw,relatime shared:10 - cgroup cgroup rw,memory\n`);
  writeFileSync(join(proc, 'cgroup'), '4:memory:/app\n0::/\n');
  return { cgroups: Cgroups.detect(proc), dir: join(memory, 'app', 'dockgate') };
}

describe('a rootless server keeps its state in the user\'s data directory', () => {
  test('$XDG_DATA_HOME/dockgate when XDG_DATA_HOME is absolute, else ~/.local/share/dockgate (a relative one is ignored, as the XDG spec says)', () => {
    expect(rootlessStateDir({ XDG_DATA_HOME: '/srv/data' }, '/home/app')).toBe('/srv/data/dockgate');
    expect(rootlessStateDir({ XDG_DATA_HOME: 'data' }, '/home/app')).toBe('/home/app/.local/share/dockgate');
    expect(rootlessStateDir({}, '/home/app')).toBe('/home/app/.local/share/dockgate');
  });
});

describe('a limit whose cgroup is not delegated is refused naming the group and the command that delegates it', () => {
  test('a mounted controller whose group cannot be made is not managed, and is named as the one to delegate', () => {
    const { cgroups, dir } = undelegatedMemory();
    expect(cgroups.controllers).toEqual([]);
    expect(cgroups.undelegated('memory')).toBe(dir);
    expect(cgroups.undelegated('pids')).toBeUndefined();
    expect(delegationCommand(cgroups, app)).toBe(`sudo sh -c 'mkdir -p ${dir} && chown -R app ${dir}'`);
    expect(undelegatedReason(cgroups, 'memory', app)).toBe(`the server runs rootless (as app) and the memory cgroup ${dir} is not delegated to it; delegate it once with: sudo sh -c 'mkdir -p ${dir} && chown -R app ${dir}'`);
  });
  test('a controller that is not mounted at all is named without a command', () => {
    expect(undelegatedReason(undefined, 'pids', app)).toBe('the server runs rootless (as app) and the pids cgroup is not available to it');
    expect(delegationCommand(undefined, app)).toBeUndefined();
  });
  test('the start notice lists the limits enforced (none) and the ones refused, with the command', () => {
    const { cgroups, dir } = undelegatedMemory();
    const notice = rootlessNotice(cgroups, app);
    expect(notice).toMatch(/^\[dockgate\] sandbox runtime rootless as app \(uid 1001\): limits enforced: none; refused by name: --memory, --cpus\/--cpu-shares, --cpuset-cpus, --pids-limit/);
    expect(notice).toContain(`chown -R app ${dir}`);
  });
});

describe('a rootless server refuses host ports it cannot listen on, by name', () => {
  const body = (bindings: Record<string, unknown>) => containerSpecOf({ Image: 'busybox', HostConfig: { PortBindings: bindings } });
  test('a host port below the first unprivileged port is a 400 naming the binding; an ephemeral or higher one passes', () => {
    expect(() => refusePrivilegedPorts(body({ '80/tcp': [{ HostPort: '80' }] }), 1024, app)).toThrow('HostConfig.PortBindings "80/tcp": host port 80 is below 1024');
    expect(() => refusePrivilegedPorts(body({ '80/tcp': [{ HostPort: '' }] }), 1024, app)).not.toThrow();
    expect(() => refusePrivilegedPorts(body({ '80/tcp': [{ HostPort: '8080' }] }), 1024, app)).not.toThrow();
    expect(() => refusePrivilegedPorts(body({ '53/udp': [{ HostPort: '53' }] }), 0, app)).not.toThrow();
  });
});

describe('a rootless server maps one id: a user other than root:root is refused naming /etc/subuid', () => {
  test('without an entry the message gives the line to add; with one it says the range is not mapped yet; root passes', () => {
    const dir = tmp();
    const none = join(dir, 'none');
    writeFileSync(none, 'other:100000:65536\n');
    const has = join(dir, 'has');
    writeFileSync(has, 'app:200000:65536\n');
    expect(subordinateEntry(app, has)).toBe('app:200000:65536');
    expect(subordinateEntry({ ...app, name: 'x' }, has)).toBeUndefined();
    expect(() => refuseOtherUsers({ uid: 1000, gid: 1000 }, '1000', app, none, none)).toThrow('add "app:100000:65536" (an unused range) to /etc/subuid and /etc/subgid');
    expect(() => refuseOtherUsers({ uid: 1000, gid: 1000 }, '1000', app, has, has)).toThrow('needs the subordinate range of /etc/subuid and /etc/subgid mapped');
    expect(() => refuseOtherUsers({ uid: 0, gid: 5 }, '0:5', app, has, has)).toThrow('User "0:5"');
    expect(() => refuseOtherUsers({ uid: 0, gid: 0 }, 'root', app, none, none)).not.toThrow();
  });
  test('without an image root a numeric spec is read as uid[:gid] and a name counts as not root', () => {
    expect(numericUser('0')).toEqual({ uid: 0, gid: 0 });
    expect(numericUser('0:0')).toEqual({ uid: 0, gid: 0 });
    expect(numericUser('1000:5')).toEqual({ uid: 1000, gid: 5 });
    expect(numericUser('root')).toEqual({ uid: -1, gid: 0 });
  });
});
