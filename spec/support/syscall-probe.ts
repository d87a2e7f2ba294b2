/**
 * A tiny static x86_64 Linux program (an ELF file, no libc) that makes one system call with up to
 * four integer arguments and exits 0 when it succeeded, else with its errno (EPERM: 1, ENOSYS: 38).
 * The busybox image has no keyctl, bpf or perf applet; this lets a spec ask the kernel directly
 * whether a container may make a call, without a compiler on the machine.
 *
 * @example
 * writeFileSync(join(dir, 'keyctl'), syscallProbe(250, [0, -3]), { mode: 0o755 }); // KEYCTL_GET_KEYRING_ID
 */
export function syscallProbe(nr: number, args: readonly number[] = []): Buffer {
  const imm = (n: number): Buffer => {
    const b = Buffer.alloc(4);
    b.writeInt32LE(n | 0);
    return b;
  };
  // mov rdi/rsi/rdx/r10, imm32 (sign-extended)
  const argRegs = [[0x48, 0xc7, 0xc7], [0x48, 0xc7, 0xc6], [0x48, 0xc7, 0xc2], [0x49, 0xc7, 0xc2]];
  const code = Buffer.concat([
    ...argRegs.map((op, i) => Buffer.concat([Buffer.from(op), imm(args[i] ?? 0)])),
    Buffer.from([0xb8]), imm(nr), // mov eax, nr
    Buffer.from([0x0f, 0x05]), // syscall
    Buffer.from([0x48, 0x85, 0xc0]), // test rax, rax
    Buffer.from([0x78, 0x04]), // js failed
    Buffer.from([0x31, 0xff]), // xor edi, edi
    Buffer.from([0xeb, 0x04]), // jmp exit
    Buffer.from([0xf7, 0xd8]), // failed: neg eax
    Buffer.from([0x89, 0xc7]), // mov edi, eax
    Buffer.from([0xb8]), imm(60), // exit: mov eax, 60 (exit)
    Buffer.from([0x0f, 0x05]), // syscall
  ]);
  const base = 0x400000;
  const headers = 64 + 56;
  const size = headers + code.length;
  const elf = Buffer.alloc(headers);
  Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]).copy(elf, 0); // ELF64, little-endian, SysV
  elf.writeUInt16LE(2, 16); // ET_EXEC
  elf.writeUInt16LE(0x3e, 18); // EM_X86_64
  elf.writeUInt32LE(1, 20); // EV_CURRENT
  elf.writeBigUInt64LE(BigInt(base + headers), 24); // e_entry
  elf.writeBigUInt64LE(64n, 32); // e_phoff
  elf.writeUInt16LE(64, 52); // e_ehsize
  elf.writeUInt16LE(56, 54); // e_phentsize
  elf.writeUInt16LE(1, 56); // e_phnum
  elf.writeUInt32LE(1, 64); // PT_LOAD
  elf.writeUInt32LE(5, 68); // PF_R | PF_X
  elf.writeBigUInt64LE(0n, 72); // p_offset
  elf.writeBigUInt64LE(BigInt(base), 80); // p_vaddr
  elf.writeBigUInt64LE(BigInt(base), 88); // p_paddr
  elf.writeBigUInt64LE(BigInt(size), 96); // p_filesz
  elf.writeBigUInt64LE(BigInt(size), 104); // p_memsz
  elf.writeBigUInt64LE(0x1000n, 112); // p_align
  return Buffer.concat([elf, code]);
}

/** x86_64 numbers of the calls the specs probe (asm/unistd_64.h). */
export const SYSCALL = { personality: 135, add_key: 248, request_key: 249, keyctl: 250, perf_event_open: 298, bpf: 321, getpid: 39 } as const;
