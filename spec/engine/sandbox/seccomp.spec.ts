import { describe, test, expect } from '@jest/globals';
import { compileSeccomp } from '../../../lib/engine/runtime/sandbox/seccomp/bpf-filter.js';
import { containerCaps } from '../../../lib/engine/runtime/sandbox/seccomp/container-seccomp.js';
import { securityOptions } from '../../../lib/engine/runtime/sandbox/seccomp/security-opt.js';
import { X86_64_SYSCALLS } from '../../../lib/engine/runtime/sandbox/seccomp/x86-64-syscalls.js';
import { containerSpecOf, type ContainerSpec } from '../../../lib/engine-api/container-spec.js';

const X86_64 = 0xc000003e;
const I386 = 0x40000003;
const ALLOW = 'allow';
const KILL = 'kill';
const EPERM = 'errno 1';
const ENOSYS = 'errno 38';

/** Runs a classic BPF seccomp program on one `struct seccomp_data` (the kernel's interpreter, in small). */
function evaluate(program: Buffer, arch: number, nr: number, arg0 = 0): string {
  const data = Buffer.alloc(64);
  data.writeInt32LE(nr, 0);
  data.writeUInt32LE(arch, 4);
  data.writeBigUInt64LE(BigInt(arg0), 16);
  let acc = 0;
  for (let pc = 0; pc < program.length / 8;) {
    const code = program.readUInt16LE(pc * 8);
    const jt = program.readUInt8(pc * 8 + 2);
    const jf = program.readUInt8(pc * 8 + 3);
    const k = program.readUInt32LE(pc * 8 + 4);
    switch (code) {
      case 0x20: acc = data.readUInt32LE(k); pc++; break;
      case 0x15: pc += 1 + (acc === k ? jt : jf); break;
      case 0x35: pc += 1 + (acc >= k ? jt : jf); break;
      case 0x45: pc += 1 + ((acc & k) !== 0 ? jt : jf); break;
      case 0x06:
        if (k === 0x7fff0000) return ALLOW;
        if (k === 0x80000000) return KILL;
        if ((k & 0xffff0000) === 0x00050000) return `errno ${k & 0xffff}`;
        return `ret ${k}`;
      default: throw new Error(`unexpected opcode ${code}`);
    }
  }
  throw new Error('fell off the end of the program');
}

const body = (host: Record<string, unknown> = {}): ContainerSpec => containerSpecOf({ Image: 'busybox', HostConfig: host });
const filterFor = (host: Record<string, unknown> = {}, kernel = '6.1.0'): Buffer => compileSeccomp({ caps: containerCaps(body(host)), kernel });
const call = (filter: Buffer, name: string, arg0 = 0): string => evaluate(filter, X86_64, X86_64_SYSCALLS[name]!, arg0);

/**
 * The x86_64 system calls Docker's default profile (moby profiles/seccomp/default.json) does not
 * allow for a container with the default capability set on a kernel >= 4.8 (its allow lists
 * subtracted from asm/unistd_64.h), clone/clone3/unshare aside (argument rules, below).
 */
const DOCKER_DENIES = [
  'syslog', 'uselib', 'ustat', 'sysfs', 'vhangup', 'pivot_root', '_sysctl', 'acct', 'settimeofday', 'mount', 'umount2', 'swapon', 'swapoff',
  'reboot', 'sethostname', 'setdomainname', 'iopl', 'ioperm', 'create_module', 'init_module', 'delete_module', 'get_kernel_syms',
  'query_module', 'quotactl', 'nfsservctl', 'getpmsg', 'putpmsg', 'afs_syscall', 'tuxcall', 'security', 'lookup_dcookie', 'clock_settime',
  'vserver', 'mbind', 'set_mempolicy', 'get_mempolicy', 'kexec_load', 'add_key', 'request_key', 'keyctl', 'migrate_pages', 'move_pages',
  'perf_event_open', 'fanotify_init', 'open_by_handle_at', 'setns', 'kcmp', 'finit_module', 'kexec_file_load', 'bpf', 'userfaultfd',
  'open_tree', 'move_mount', 'fsopen', 'fsconfig', 'fsmount', 'fspick', 'pidfd_getfd', 'process_madvise', 'mount_setattr', 'quotactl_fd',
  'set_mempolicy_home_node',
];

describe('the seccomp filter denies what Docker\'s default profile denies, with EPERM', () => {
  const filter = filterFor();
  test.each(DOCKER_DENIES)('%s answers EPERM', (name) => {
    expect(call(filter, name)).toBe(EPERM);
  });
  test('every other x86_64 system call of the table is allowed (read, openat, execve, chroot with the default CAP_SYS_CHROOT, ptrace on kernel >= 4.8…)', () => {
    const denied = new Set([...DOCKER_DENIES, 'clone', 'clone3', 'unshare', 'personality', 'socket']);
    const allowed = Object.keys(X86_64_SYSCALLS).filter((n) => !denied.has(n));
    expect(allowed).toEqual(expect.arrayContaining(['read', 'openat', 'execve', 'chroot', 'ptrace', 'io_uring_setup', 'name_to_handle_at']));
    for (const name of allowed) expect([name, call(filter, name)]).toEqual([name, ALLOW]);
  });
  test('ptrace and process_vm_readv/writev are denied on a kernel older than 4.8 without CAP_SYS_PTRACE, as Docker does', () => {
    expect(call(filterFor({}, '4.4.0'), 'ptrace')).toBe(EPERM);
    expect(call(filterFor({}, '4.4.0'), 'process_vm_readv')).toBe(EPERM);
    expect(call(filterFor({ CapAdd: ['SYS_PTRACE'] }, '4.4.0'), 'ptrace')).toBe(ALLOW);
  });
});

describe('no new namespaces: clone with a namespace flag and unshare are EPERM, clone3 is ENOSYS (libc falls back to clone)', () => {
  const filter = filterFor();
  test('clone(CLONE_NEWUSER), clone(CLONE_NEWNS), clone(CLONE_NEWNET) answer EPERM', () => {
    for (const flag of [0x10000000, 0x00020000, 0x40000000, 0x20000000, 0x02000000]) expect(call(filter, 'clone', flag | 17)).toBe(EPERM);
  });
  test('clone for fork and threads (no namespace flag) is allowed', () => {
    expect(call(filter, 'clone', 17)).toBe(ALLOW); // SIGCHLD: fork
    expect(call(filter, 'clone', 0x3d0f00)).toBe(ALLOW); // glibc's pthread_create flags
  });
  test('unshare answers EPERM and clone3 ENOSYS', () => {
    expect(call(filter, 'unshare', 0x10000000)).toBe(EPERM);
    expect(call(filter, 'clone3')).toBe(ENOSYS);
  });
  test('CAP_SYS_ADMIN lifts them with the rest of its group, as in Docker (mount, setns, unshare, clone flags)', () => {
    const admin = filterFor({ CapAdd: ['SYS_ADMIN'] });
    for (const name of ['mount', 'setns', 'unshare', 'bpf', 'perf_event_open', 'clone3']) expect([name, call(admin, name)]).toEqual([name, ALLOW]);
    expect(call(admin, 'clone', 0x10000000)).toBe(ALLOW);
    expect(call(admin, 'pivot_root')).toBe(EPERM);
    expect(call(admin, 'keyctl')).toBe(EPERM);
  });
  test('CapDrop SYS_CHROOT closes chroot; CapAdd ALL opens every capability-conditional call', () => {
    expect(call(filterFor({ CapDrop: ['SYS_CHROOT'] }), 'chroot')).toBe(EPERM);
    const all = filterFor({ CapAdd: ['ALL'] });
    for (const name of ['reboot', 'init_module', 'acct', 'iopl', 'settimeofday', 'open_by_handle_at', 'syslog']) expect([name, call(all, name)]).toEqual([name, ALLOW]);
    expect(call(all, 'kexec_load')).toBe(EPERM);
  });
});

describe('argument rules: personality takes only Docker\'s values, socket(AF_VSOCK) is EPERM', () => {
  const filter = filterFor();
  test('personality 0, 8, 0x20000, 0x20008 and 0xffffffff (query) are allowed; ADDR_NO_RANDOMIZE is EPERM', () => {
    for (const v of [0, 8, 0x20000, 0x20008, 0xffffffff]) expect(call(filter, 'personality', v)).toBe(ALLOW);
    expect(call(filter, 'personality', 0x0040000)).toBe(EPERM);
  });
  test('socket(AF_INET) is allowed and socket(AF_VSOCK) EPERM', () => {
    expect(call(filter, 'socket', 2)).toBe(ALLOW);
    expect(call(filter, 'socket', 40)).toBe(EPERM);
  });
});

describe('the filter is for x86_64 only: other ABIs are killed, unknown newer calls get ENOSYS', () => {
  const filter = filterFor();
  test('an i386 system call (a 32-bit binary) kills the process: the numbers mean x86_64 only', () => {
    expect(evaluate(filter, I386, 1)).toBe(KILL);
  });
  test('an x32 system call (nr | 0x40000000) kills the process', () => {
    expect(evaluate(filter, X86_64, 0x40000000 | 0)).toBe(KILL);
  });
  test('a number above the table (a newer kernel\'s call) answers ENOSYS so libc falls back, as runc does', () => {
    const highest = Math.max(...Object.values(X86_64_SYSCALLS));
    expect(evaluate(filter, X86_64, highest + 1)).toBe(ENOSYS);
    expect(evaluate(filter, X86_64, 1000)).toBe(ENOSYS);
  });
});

describe('HostConfig.SecurityOpt: seccomp=unconfined and no-new-privileges are honored, the rest is refused by name', () => {
  test('seccomp=unconfined (and the old seccomp:unconfined) lift the filter', () => {
    expect(securityOptions(body({ SecurityOpt: ['seccomp=unconfined'] }))).toEqual({ seccompUnconfined: true });
    expect(securityOptions(body({ SecurityOpt: ['seccomp:unconfined'] }))).toEqual({ seccompUnconfined: true });
    expect(securityOptions(body({}))).toEqual({ seccompUnconfined: false });
  });
  test('no-new-privileges is already in force and accepted', () => {
    expect(securityOptions(body({ SecurityOpt: ['no-new-privileges', 'no-new-privileges:true'] }))).toEqual({ seccompUnconfined: false });
  });
  test('a custom profile (the CLI sends its JSON), no-new-privileges=false and apparmor are a 400 naming SecurityOpt', () => {
    expect(() => securityOptions(body({ SecurityOpt: ['seccomp={"defaultAction":"SCMP_ACT_ALLOW"}'] }))).toThrow(/HostConfig.SecurityOpt "seccomp=<profile>": a custom seccomp profile is not supported/);
    expect(() => securityOptions(body({ SecurityOpt: ['no-new-privileges=false'] }))).toThrow(/HostConfig.SecurityOpt "no-new-privileges=false"/);
    expect(() => securityOptions(body({ SecurityOpt: ['apparmor=unconfined'] }))).toThrow(/HostConfig.SecurityOpt "apparmor=unconfined" is not supported/);
  });
});
