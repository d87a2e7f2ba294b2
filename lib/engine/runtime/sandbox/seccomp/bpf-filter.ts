import { AF_VSOCK, CLONE_NAMESPACE_FLAGS, DENIED, PERSONALITY_ALLOWED, PTRACE_MIN_KERNEL, PTRACE_SYSCALLS } from './default-profile.js';
import { X86_64_SYSCALLS } from './x86-64-syscalls.js';

/**
 * The seccomp filter as a classic BPF program (`struct sock_filter[]`, 8 bytes per instruction in
 * host byte order), which is what bubblewrap's `--seccomp FD` loads. Written here rather than
 * through libseccomp: no npm package emits raw BPF without the C library, and the program is
 * short and linear (see {@link compileSeccomp}).
 */

/** `struct seccomp_data` offsets (linux/seccomp.h): nr, arch, then args[6] as u64 from 16. */
const NR = 0;
const ARCH = 4;
/** The low 32 bits of args[0] on a little-endian machine. */
const ARG0_LO = 16;

/** AUDIT_ARCH_X86_64 (EM_X86_64 | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE). */
const AUDIT_ARCH_X86_64 = 0xc000003e;
/** x32 system calls are x86_64 numbers with this bit set (__X32_SYSCALL_BIT). */
const X32_SYSCALL_BIT = 0x40000000;

const RET_KILL_PROCESS = 0x80000000;
const RET_ALLOW = 0x7fff0000;
const RET_ERRNO = 0x00050000;
const EPERM = 1;
const ENOSYS = 38;

// BPF opcodes (linux/bpf_common.h).
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const JSET_K = 0x45;
const RET_K = 0x06;

interface Insn { code: number; jt: number; jf: number; k: number }

const ld = (offset: number): Insn => ({ code: LD_W_ABS, jt: 0, jf: 0, k: offset });
const ret = (value: number): Insn => ({ code: RET_K, jt: 0, jf: 0, k: value >>> 0 });
const jump = (code: number, k: number, jt: number, jf: number): Insn => ({ code, jt, jf, k: k >>> 0 });

/** What the filter is made for: the container's capability set and the running kernel. */
export interface SeccompTarget {
  /** Capabilities the container holds, without `CAP_` (from bwrap-args' capability set). */
  caps: ReadonlySet<string>;
  /** `os.release()` of the host, for Docker's kernel-version conditions. */
  kernel: string;
}

/** The architectures a table exists for (Node's `process.arch` names). */
export const SECCOMP_ARCHES = ['x64'] as const;

/**
 * Compiles Docker's default profile (default-profile.ts) for x86_64 and one container:
 *
 * 1. a foreign architecture (a 32-bit i386 binary) or an x32 system call kills the process: the
 *    numbers below mean x86_64 only, and Docker's filter would look them up in other tables;
 * 2. each denied call answers EPERM (`jeq nr; ret ERRNO`) unless a capability lifts it;
 * 3. clone with a namespace flag answers EPERM, clone3 ENOSYS (its flags are behind a pointer
 *    BPF cannot follow; libc falls back to clone), personality only takes Docker's values,
 *    socket(AF_VSOCK) is EPERM; CAP_SYS_ADMIN lifts the clone rules as in Docker;
 * 4. a number above the table answers ENOSYS; everything else is allowed.
 */
export function compileSeccomp(target: SeccompTarget): Buffer {
  const table = X86_64_SYSCALLS;
  const nr = (name: string): number | undefined => table[name];
  const holds = (caps: readonly string[] | undefined): boolean => caps !== undefined && caps.some((c) => target.caps.has(c));
  const program: Insn[] = [
    ld(ARCH),
    jump(JEQ_K, AUDIT_ARCH_X86_64, 1, 0),
    ret(RET_KILL_PROCESS),
    ld(NR),
    jump(JGE_K, X32_SYSCALL_BIT, 0, 1),
    ret(RET_KILL_PROCESS),
  ];
  const denied = new Set<number>();
  for (const group of DENIED) {
    if (holds(group.unlessCaps)) continue;
    for (const name of group.names) {
      const n = nr(name);
      if (n !== undefined) denied.add(n);
    }
  }
  if (!kernelAtLeast(target.kernel, PTRACE_MIN_KERNEL) && !target.caps.has('SYS_PTRACE')) {
    for (const name of PTRACE_SYSCALLS) denied.add(nr(name)!);
  }
  for (const n of [...denied].sort((a, b) => a - b)) program.push(jump(JEQ_K, n, 0, 1), ret(RET_ERRNO | EPERM));

  // Argument rules: each block starts with `jeq nr` that skips the whole block when it is another call.
  const block = (n: number, body: Insn[]): void => {
    program.push(jump(JEQ_K, n, 0, body.length), ...body);
  };
  if (!target.caps.has('SYS_ADMIN')) {
    block(nr('clone')!, [ld(ARG0_LO), jump(JSET_K, CLONE_NAMESPACE_FLAGS, 0, 1), ret(RET_ERRNO | EPERM), ret(RET_ALLOW)]);
    block(nr('clone3')!, [ret(RET_ERRNO | ENOSYS)]);
  }
  // personality takes an unsigned int: the kernel looks at the low 32 bits only.
  block(nr('personality')!, [ld(ARG0_LO), ...PERSONALITY_ALLOWED.flatMap((v) => [jump(JEQ_K, v, 0, 1), ret(RET_ALLOW)]), ret(RET_ERRNO | EPERM)]);
  block(nr('socket')!, [ld(ARG0_LO), jump(JEQ_K, AF_VSOCK, 0, 1), ret(RET_ERRNO | EPERM), ret(RET_ALLOW)]);

  const highest = Math.max(...Object.values(table));
  program.push(jump(JGE_K, highest + 1, 0, 1), ret(RET_ERRNO | ENOSYS), ret(RET_ALLOW));
  return encode(program);
}

function encode(program: Insn[]): Buffer {
  const out = Buffer.alloc(program.length * 8);
  program.forEach((insn, i) => {
    out.writeUInt16LE(insn.code, i * 8);
    out.writeUInt8(insn.jt, i * 8 + 2);
    out.writeUInt8(insn.jf, i * 8 + 3);
    out.writeUInt32LE(insn.k, i * 8 + 4);
  });
  return out;
}

/** `release` (`6.1.0-18-amd64`) is at least `[major, minor]`. */
function kernelAtLeast(release: string, [major, minor]: readonly [number, number]): boolean {
  const m = /^(\d+)\.(\d+)/.exec(release);
  if (!m) return false;
  const [a, b] = [Number(m[1]), Number(m[2])];
  return a > major || (a === major && b >= minor);
}
