import { test, expect, afterAll, beforeAll } from '@jest/globals';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { describeWithPeers } from '../../support/peers.js';
import { MASKED_PATHS, READONLY_PATHS } from '../../../lib/engine/runtime/sandbox/masked-paths.js';
import { SANDBOX_PEERS, sandboxCli } from '../support/sandbox-cli.js';

/**
 * Issue 24: /proc/sys was writable inside containers, so `core_pattern` could name a container
 * file that the kernel runs as host root at the next crash. Docker's masked and read-only paths
 * (moby oci/defaults.go), each checked in a container and in an exec.
 */
const PROC_MASKED = MASKED_PATHS.filter((p) => p.startsWith('/proc/'));
const kind = (path: string): 'file' | 'dir' | 'missing' => (existsSync(path) ? (statSync(path).isDirectory() ? 'dir' : 'file') : 'missing');
/** A mount point's options in the container's mountinfo (field 6), or undefined when the path is no mount point. */
const MOUNT_OPTS = (path: string): string => `awk '$5 == "${path}" { print $6 }' /proc/self/mountinfo`;

describeWithPeers('sandbox runtime: Docker\'s masked and read-only /proc paths, in containers and execs', SANDBOX_PEERS, () => {
  const sandbox = sandboxCli();
  const name = `dg-masked-${Date.now()}`;
  beforeAll(async () => {
    expect((await sandbox.cli('run', '-d', '--name', name, 'busybox', 'sleep', '120')).code).toBe(0);
  });
  afterAll(async () => {
    await sandbox.cli('rm', '-f', name);
    await sandbox.close();
  });
  const inRun = (script: string, ...flags: string[]) => sandbox.cli('run', '--rm', ...flags, 'busybox', 'sh', '-c', script);
  const inExec = (script: string, ...flags: string[]) => sandbox.cli('exec', ...flags, name, 'sh', '-c', script);

  test('writing /proc/sys/kernel/core_pattern fails with "Read-only file system", as root and as -u 1000, in a run and in an exec', async () => {
    // It writes back the value there already: should the protection ever fail, the host is unchanged.
    const write = 'v=$(cat /proc/sys/kernel/core_pattern); echo "$v" > /proc/sys/kernel/core_pattern && echo WROTE';
    for (const r of [await inRun(write), await inRun(write, '-u', '1000'), await inExec(write), await inExec(write, '-u', '1000')]) {
      expect(r.stdout).not.toContain('WROTE');
      expect(r.stderr).toMatch(/Read-only file system|Permission denied/);
    }
    // Root's own attempt is stopped by the read-only mount, not by file permissions.
    expect((await inRun(write)).stderr).toContain('Read-only file system');
  });

  for (const path of READONLY_PATHS) {
    test(`${path} is mounted read-only (${kind(path)} on this kernel)`, async () => {
      const script = `${MOUNT_OPTS(path)}; test -e ${path} && echo PRESENT`;
      for (const r of [await inRun(script), await inExec(script)]) {
        if (kind(path) === 'missing') {
          expect(r.stdout).toBe('');
        } else {
          expect(r.stdout.split('\n')[0]).toMatch(/^ro(,|$)/);
        }
      }
    });
  }

  for (const path of PROC_MASKED) {
    const what = kind(path);
    test(`${path} is masked (${what} on this kernel: ${what === 'dir' ? 'an empty read-only tmpfs' : what === 'file' ? 'reads as empty' : 'absent in the container too'})`, async () => {
      const script = what === 'dir'
        ? `ls -A ${path} | wc -l; touch ${path}/x 2>&1; ${MOUNT_OPTS(path)}`
        : what === 'file' ? `wc -c < ${path}` : `test -e ${path} && echo PRESENT; true`;
      for (const r of [await inRun(script), await inExec(script)]) {
        if (what === 'dir') {
          expect(r.stdout).toMatch(/^0\n.*Read-only file system\nro(,|\n)/s);
        } else if (what === 'file') {
          expect(r.stdout.trim()).toBe('0');
        } else {
          expect(r.stdout).toBe('');
        }
      }
    });
  }

  test('/proc/interrupts, which the host shows, reads as empty (the masks hide real content)', async () => {
    expect(readFileSync('/proc/interrupts', 'utf8').length).toBeGreaterThan(0);
    expect((await inRun('wc -c < /proc/interrupts')).stdout.trim()).toBe('0');
  });

  test('/sys shows nothing of the host\'s sysfs, only the read-only cgroup view (/sys/firmware, /sys/devices/virtual/powercap are not there), in a run and in an exec', async () => {
    const script = 'ls -A /sys; ls -A /sys/fs; test -e /sys/firmware || echo no-firmware; test -e /sys/devices/virtual/powercap || echo no-powercap; mkdir /sys/x 2>&1 >/dev/null | grep -c "Read-only"';
    for (const r of [await inRun(script), await inExec(script)]) expect(r.stdout).toBe('fs\ncgroup\nno-firmware\nno-powercap\n1\n');
  });

  test('the rest of /proc still works: /proc/1/cmdline, /proc/self/status, /proc/sys read as before', async () => {
    const r = await inRun('cat /proc/1/cmdline | tr "\\0" " "; grep -c ^Name /proc/self/status; cat /proc/sys/kernel/ostype');
    expect(r.stdout).toBe('sh -c cat /proc/1/cmdline | tr "\\0" " "; grep -c ^Name /proc/self/status; cat /proc/sys/kernel/ostype 1\nLinux\n');
  });
});
