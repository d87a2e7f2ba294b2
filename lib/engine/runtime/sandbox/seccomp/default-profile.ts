/**
 * The sandbox's seccomp profile, as data: Docker's default profile (moby
 * profiles/seccomp/default.json) read the other way round. Docker lists what is allowed and
 * answers EPERM for the rest; on x86_64 that rest is the system calls listed here, so a filter
 * denying exactly these (and the argument rules below) has the same effect. Names are looked up
 * in the architecture's table (x86-64-syscalls.ts); a name the table lacks is simply not a system
 * call of that architecture.
 */

/** A group of denied system calls, lifted (as Docker lifts them) when the container holds one of `unlessCaps`. */
export interface DeniedSyscalls {
  names: readonly string[];
  /** Capabilities (without `CAP_`) any of which lets its holder make these calls, as Docker's `includes.caps`. */
  unlessCaps?: readonly string[];
  /** Why they are closed: a line for the reader. */
  why: string;
}

export const DENIED: readonly DeniedSyscalls[] = [
  { why: 'the kernel keyring is not namespaced', names: ['add_key', 'request_key', 'keyctl'] },
  { why: 'kexec replaces the running kernel', names: ['kexec_load', 'kexec_file_load'] },
  { why: 'page migration and userfaultfd are kernel-exploit primitives', names: ['migrate_pages', 'move_pages', 'userfaultfd'] },
  { why: 'obsolete or never implemented', names: ['uselib', 'ustat', 'sysfs', '_sysctl', 'create_module', 'get_kernel_syms', 'query_module', 'nfsservctl', 'getpmsg', 'putpmsg', 'afs_syscall', 'tuxcall', 'security', 'vserver'] },
  { why: 'swap is the host\'s', names: ['swapon', 'swapoff'] },
  { why: 'pivot_root is not allowed even with CAP_SYS_ADMIN (Docker)', names: ['pivot_root'] },
  {
    why: 'mounts, namespaces, hostnames, BPF, perf, quotas and the kernel log need CAP_SYS_ADMIN',
    unlessCaps: ['SYS_ADMIN'],
    names: ['mount', 'umount2', 'mount_setattr', 'move_mount', 'open_tree', 'fsopen', 'fsconfig', 'fsmount', 'fspick', 'setns', 'unshare',
      'sethostname', 'setdomainname', 'lookup_dcookie', 'quotactl', 'quotactl_fd', 'fanotify_init'],
  },
  { why: 'BPF programs', unlessCaps: ['SYS_ADMIN', 'BPF'], names: ['bpf'] },
  { why: 'perf events see the whole machine', unlessCaps: ['SYS_ADMIN', 'PERFMON'], names: ['perf_event_open'] },
  { why: 'the kernel log', unlessCaps: ['SYS_ADMIN', 'SYSLOG'], names: ['syslog'] },
  { why: 'open_by_handle_at opens any file of a mounted file system (the "shocker" escape)', unlessCaps: ['DAC_READ_SEARCH'], names: ['open_by_handle_at'] },
  { why: 'reboot', unlessCaps: ['SYS_BOOT'], names: ['reboot'] },
  { why: 'chroot', unlessCaps: ['SYS_CHROOT'], names: ['chroot'] },
  { why: 'kernel modules', unlessCaps: ['SYS_MODULE'], names: ['init_module', 'finit_module', 'delete_module'] },
  { why: 'process accounting', unlessCaps: ['SYS_PACCT'], names: ['acct'] },
  { why: 'reaching into other processes', unlessCaps: ['SYS_PTRACE'], names: ['kcmp', 'pidfd_getfd', 'process_madvise'] },
  { why: 'port I/O', unlessCaps: ['SYS_RAWIO'], names: ['iopl', 'ioperm'] },
  { why: 'the clock is the host\'s', unlessCaps: ['SYS_TIME'], names: ['settimeofday', 'clock_settime'] },
  { why: 'vhangup', unlessCaps: ['SYS_TTY_CONFIG'], names: ['vhangup'] },
  { why: 'NUMA memory policy', unlessCaps: ['SYS_NICE'], names: ['mbind', 'set_mempolicy', 'get_mempolicy', 'set_mempolicy_home_node'] },
];

/**
 * ptrace and process_vm_readv/writev: Docker allows them without CAP_SYS_PTRACE from kernel 4.8
 * on, where seccomp is checked again after a tracer changes a system call (so tracing cannot be
 * used to get past the filter); on older kernels they need the capability.
 */
export const PTRACE_SYSCALLS = ['ptrace', 'process_vm_readv', 'process_vm_writev'] as const;
export const PTRACE_MIN_KERNEL: readonly [number, number] = [4, 8];

/** clone flags that make a namespace (CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET): Docker's mask 0x7E020000. */
export const CLONE_NAMESPACE_FLAGS = 0x7e020000;

/** personality values Docker allows: PER_LINUX, PER_LINUX32, UNAME26, UNAME26|PER_LINUX32, and 0xffffffff (query). */
export const PERSONALITY_ALLOWED = [0x0, 0x8, 0x20000, 0x20008, 0xffffffff] as const;

/** AF_VSOCK: sockets to the hypervisor and its other guests are not the container's to open. */
export const AF_VSOCK = 40;
