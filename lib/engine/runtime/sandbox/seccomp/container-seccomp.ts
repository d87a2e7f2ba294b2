import { writeFileSync } from 'node:fs';
import { release } from 'node:os';
import type { ContainerSpec } from '../../../../engine-api/container-spec.js';
import { capabilityArgs } from '../bwrap-args.js';
import { compileSeccomp, SECCOMP_ARCHES } from './bpf-filter.js';
import { securityOptions } from './security-opt.js';

/** Whether this machine has a system call table: the filter is written for x86_64 only. */
export function seccompSupported(arch: string = process.arch): boolean {
  return (SECCOMP_ARCHES as readonly string[]).includes(arch);
}

/**
 * The capabilities a container holds (bwrap-args' set: dockerd's default set with CapAdd and
 * CapDrop), which lift the profile's capability-conditional denials as in Docker.
 */
export function containerCaps({ host }: ContainerSpec): Set<string> {
  const args = capabilityArgs(host.capAdd, host.capDrop);
  if (!args.includes('ALL')) return new Set(ALL_CAPS);
  const caps = new Set<string>();
  for (let i = 0; i < args.length - 1; i++) if (args[i] === '--cap-add') caps.add(args[i + 1]!.replace(/^CAP_/, ''));
  return caps;
}

/**
 * Writes the container's filter to `file` (mode 0600) and answers its path, or undefined under
 * `seccomp=unconfined`. The container and each of its execs load the same file.
 */
export function prepareSeccomp(spec: ContainerSpec, file: string): string | undefined {
  if (securityOptions(spec).seccompUnconfined) return undefined;
  writeFileSync(file, compileSeccomp({ caps: containerCaps(spec), kernel: release() }), { mode: 0o600 });
  return file;
}


/** Capabilities `CapAdd: ["ALL"]` gives (capabilities(7), up to CAP_CHECKPOINT_RESTORE). */
const ALL_CAPS = [
  'CHOWN', 'DAC_OVERRIDE', 'DAC_READ_SEARCH', 'FOWNER', 'FSETID', 'KILL', 'SETGID', 'SETUID', 'SETPCAP', 'LINUX_IMMUTABLE',
  'NET_BIND_SERVICE', 'NET_BROADCAST', 'NET_ADMIN', 'NET_RAW', 'IPC_LOCK', 'IPC_OWNER', 'SYS_MODULE', 'SYS_RAWIO', 'SYS_CHROOT',
  'SYS_PTRACE', 'SYS_PACCT', 'SYS_ADMIN', 'SYS_BOOT', 'SYS_NICE', 'SYS_RESOURCE', 'SYS_TIME', 'SYS_TTY_CONFIG', 'MKNOD', 'LEASE',
  'AUDIT_WRITE', 'AUDIT_CONTROL', 'SETFCAP', 'MAC_OVERRIDE', 'MAC_ADMIN', 'SYSLOG', 'WAKE_ALARM', 'BLOCK_SUSPEND', 'AUDIT_READ',
  'PERFMON', 'BPF', 'CHECKPOINT_RESTORE',
];
