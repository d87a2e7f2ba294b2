import { afterAll, describe, expect, test } from '@jest/globals';
import { chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { detectV2, v2DelegationCommand } from '../../../lib/engine/linux/cgroup-v2.js';

/**
 * cgroup v2 delegation, read from a cgroup root given as an option: each case is a real directory
 * tree in a temporary directory shaped as systemd leaves /sys/fs/cgroup (this machine is cgroup v1).
 */
const base = mkdtempSync(join(tmpdir(), 'dockgate-cgv2-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));
const asRoot = process.getuid?.() === 0;
const UID = 1234;

/** A fake unified root: `cgroup.controllers` at its top, `subtree` with its subtree_control (owned by `owner`), and a /proc/self/cgroup naming `own`. */
function host(name: string, { unified = true, own, subtree, control = '', owner = UID }: { unified?: boolean; own: string; subtree?: string; control?: string; owner?: number }): { cgroupRoot: string; procSelfCgroup: string } {
  const root = join(base, name, 'cgroup');
  mkdirSync(root, { recursive: true });
  if (unified) writeFileSync(join(root, 'cgroup.controllers'), 'cpuset cpu io memory hugetlb pids rdma misc\n');
  if (subtree) {
    const dir = join(root, subtree);
    mkdirSync(dir, { recursive: true });
    for (const file of ['cgroup.subtree_control', 'cgroup.procs']) {
      writeFileSync(join(dir, file), file === 'cgroup.subtree_control' ? `${control}\n` : '');
      if (asRoot) chownSync(join(dir, file), owner, owner);
    }
  }
  const procSelfCgroup = join(base, name, 'self-cgroup');
  writeFileSync(procSelfCgroup, `0::${own}\n`);
  return { cgroupRoot: root, procSelfCgroup };
}

const USER_SERVICE = `/user.slice/user-${UID}.slice/user@${UID}.service`;

describe('cgroup v2 detection: a unified root is v2, and the delegated subtree is the user\'s user@UID.service (or the server\'s own unit)', () => {
  test('a root without cgroup.controllers (cgroup v1, as here) is not v2: cgroups.ts reads the v1 hierarchies', () => {
    expect(detectV2(UID, host('v1', { unified: false, own: '/' }))).toBeUndefined();
  });

  test('under user@UID.service with Debian\'s default Delegate (memory pids): those two are delegated, cpu and cpuset are missing, and the command is the user@.service drop-in', () => {
    const d = detectV2(UID, host('default', { own: `${USER_SERVICE}/app.slice/dockgate.scope`, subtree: USER_SERVICE, control: 'memory pids' }))!;
    expect(d).toMatchObject({ subtree: USER_SERVICE, userService: true, delegated: ['memory', 'pids'], missing: ['cpu', 'cpuset'] });
    if (asRoot) expect(d.owned).toBe(true);
    const command = v2DelegationCommand(d, UID)!;
    expect(command).toContain('/etc/systemd/system/user@.service.d/delegate.conf');
    expect(command).toContain('Delegate=cpu cpuset io memory pids');
    expect(command).toContain(`systemctl restart user@${UID}.service`);
  });

  test('with every controller in user@UID.service\'s cgroup.subtree_control and its files the user\'s, nothing is missing and there is no command', () => {
    const d = detectV2(UID, host('full', { own: `${USER_SERVICE}/app.slice/x.service`, subtree: USER_SERVICE, control: 'cpuset cpu io memory pids' }))!;
    expect(d).toMatchObject({ delegated: ['memory', 'pids', 'cpu', 'cpuset'], missing: [] });
    if (asRoot) expect(v2DelegationCommand(d, UID)).toBeUndefined();
  });

  (asRoot ? test : test.skip)('a subtree whose cgroup.subtree_control is not the user\'s (root kept it) is not delegated: the command is printed even with the controllers enabled', () => {
    const d = detectV2(UID, host('not-owned', { own: `${USER_SERVICE}/app.slice/x.scope`, subtree: USER_SERVICE, control: 'cpuset cpu io memory pids', owner: 0 }))!;
    expect(d.owned).toBe(false);
    expect(v2DelegationCommand(d, UID)).toContain('Delegate=');
  });

  test('a system unit with User= is its own subtree: the command is Delegate= in that unit', () => {
    const d = detectV2(UID, host('unit', { own: '/system.slice/myapp.service', subtree: '/system.slice/myapp.service', control: '' }))!;
    expect(d).toMatchObject({ subtree: '/system.slice/myapp.service', userService: false, delegated: [], missing: ['memory', 'pids', 'cpu', 'cpuset'] });
    expect(v2DelegationCommand(d, UID)).toBe('sudo systemctl edit myapp.service  # add under [Service]: Delegate=cpu cpuset io memory pids; then: sudo systemctl restart myapp.service');
  });

  test('another user\'s user@.service is not this user\'s subtree: its unit is taken as the server\'s own', () => {
    const other = '/user.slice/user-99.slice/user@99.service';
    const d = detectV2(UID, host('other', { own: `${other}/app.slice/x.scope`, subtree: other, control: 'memory pids' }))!;
    expect(d).toMatchObject({ subtree: other, userService: false });
  });

  test('a group in no .service (a login session\'s scope) has no delegated subtree: the command also says to run the server below user@UID.service', () => {
    const d = detectV2(UID, host('session', { own: `/user.slice/user-${UID}.slice/session-3.scope` }))!;
    expect(d).toMatchObject({ subtree: undefined, delegated: [], owned: false });
    expect(v2DelegationCommand(d, UID)).toContain(`so that it runs below user@${UID}.service`);
  });
});
