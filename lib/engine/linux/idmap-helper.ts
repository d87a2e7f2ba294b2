/**
 * `idmap-bind PATH USERNS`: a 277-byte static x86-64 program that remounts the mount at PATH,
 * recursively, idmapped through the user namespace file USERNS (kernel ≥ 5.12), and mounts that
 * over PATH. Node has no `open_tree`/`mount_setattr`/`move_mount`, and util-linux's
 * `mount -o X-mount.idmap=` needs 2.39 (bookworm has 2.38), so the runtime writes this program
 * once in its state directory (0700) and runs it in the launcher's private mount namespace.
 *
 * What it does, in order (exit status 0, else the failing call's errno):
 *   ns = openat(AT_FDCWD, USERNS, O_RDONLY | O_CLOEXEC)
 *   t  = open_tree(AT_FDCWD, PATH, OPEN_TREE_CLONE | AT_RECURSIVE | OPEN_TREE_CLOEXEC)   // a detached copy
 *   mount_setattr(t, "", AT_EMPTY_PATH | AT_RECURSIVE, { attr_set: MOUNT_ATTR_IDMAP, userns_fd: ns }, 32)
 *   move_mount(t, "", AT_FDCWD, PATH, MOVE_MOUNT_F_EMPTY_PATH)                               // over PATH
 *
 * A failing call leaves nothing mounted (the detached copy goes with the process). Other
 * architectures get none: their binds stay plain (README, "Binds and user namespaces").
 */

/** The machine code, assembled from the steps above (Intel syntax beside each instruction). */
const CODE: readonly (readonly number[])[] = [
  [0x48, 0x89, 0xe3], //                           mov rbx, rsp            ; argc, argv[] on the stack
  [0xbf, 0x9c, 0xff, 0xff, 0xff], //               mov edi, -100           ; AT_FDCWD
  [0x48, 0x8b, 0x73, 0x18], //                     mov rsi, [rbx+24]       ; argv[2]: USERNS
  [0xba, 0x00, 0x00, 0x08, 0x00], //               mov edx, 0x80000        ; O_CLOEXEC
  [0xb8, 0x01, 0x01, 0x00, 0x00], //               mov eax, 257            ; openat
  [0x0f, 0x05], //                                 syscall
  [0x85, 0xc0], //                                 test eax, eax
  [0x78, 0x76], //                                 js fail
  [0x49, 0x89, 0xc4], //                           mov r12, rax            ; ns
  [0xbf, 0x9c, 0xff, 0xff, 0xff], //               mov edi, -100
  [0x48, 0x8b, 0x73, 0x10], //                     mov rsi, [rbx+16]       ; argv[1]: PATH
  [0xba, 0x01, 0x80, 0x08, 0x00], //               mov edx, 0x88001        ; OPEN_TREE_CLONE|AT_RECURSIVE|OPEN_TREE_CLOEXEC
  [0xb8, 0xac, 0x01, 0x00, 0x00], //               mov eax, 428            ; open_tree
  [0x0f, 0x05], //                                 syscall
  [0x85, 0xc0], //                                 test eax, eax
  [0x78, 0x5a], //                                 js fail
  [0x49, 0x89, 0xc5], //                           mov r13, rax            ; t
  [0x31, 0xc0], //                                 xor eax, eax
  [0x41, 0x54], //                                 push r12                ; struct mount_attr, last field first: userns_fd
  [0x50], //                                       push rax                ; propagation
  [0x50], //                                       push rax                ; attr_clr (its zero bytes are also the "")
  [0x68, 0x00, 0x00, 0x10, 0x00], //               push 0x100000           ; attr_set: MOUNT_ATTR_IDMAP
  [0x4c, 0x89, 0xef], //                           mov rdi, r13
  [0x48, 0x8d, 0x74, 0x24, 0x08], //               lea rsi, [rsp+8]        ; ""
  [0xba, 0x00, 0x90, 0x00, 0x00], //               mov edx, 0x9000         ; AT_EMPTY_PATH|AT_RECURSIVE
  [0x49, 0x89, 0xe2], //                           mov r10, rsp            ; &attr
  [0x41, 0xb8, 0x20, 0x00, 0x00, 0x00], //         mov r8d, 32             ; sizeof attr
  [0xb8, 0xba, 0x01, 0x00, 0x00], //               mov eax, 442            ; mount_setattr
  [0x0f, 0x05], //                                 syscall
  [0x85, 0xc0], //                                 test eax, eax
  [0x78, 0x2b], //                                 js fail
  [0x4c, 0x89, 0xef], //                           mov rdi, r13
  [0x48, 0x8d, 0x74, 0x24, 0x08], //               lea rsi, [rsp+8]        ; ""
  [0xba, 0x9c, 0xff, 0xff, 0xff], //               mov edx, -100
  [0x4c, 0x8b, 0x53, 0x10], //                     mov r10, [rbx+16]       ; PATH
  [0x41, 0xb8, 0x04, 0x00, 0x00, 0x00], //         mov r8d, 4              ; MOVE_MOUNT_F_EMPTY_PATH
  [0xb8, 0xad, 0x01, 0x00, 0x00], //               mov eax, 429            ; move_mount
  [0x0f, 0x05], //                                 syscall
  [0x85, 0xc0], //                                 test eax, eax
  [0x78, 0x09], //                                 js fail
  [0x31, 0xff], //                                 xor edi, edi
  [0xb8, 0x3c, 0x00, 0x00, 0x00], //               mov eax, 60             ; exit(0)
  [0x0f, 0x05], //                                 syscall
  [0xf7, 0xd8], //                         fail:   neg eax
  [0x89, 0xc7], //                                 mov edi, eax
  [0xb8, 0x3c, 0x00, 0x00, 0x00], //               mov eax, 60             ; exit(errno)
  [0x0f, 0x05], //                                 syscall
];

const BASE = 0x400000;
const HEADERS = 64 + 56;

/** The program as an ELF executable (one loaded segment, no sections); undefined off x86-64. */
export function idmapHelper(arch: string = process.arch): Buffer | undefined {
  if (arch !== 'x64') return undefined;
  const code = Buffer.from(CODE.flat());
  const elf = Buffer.alloc(HEADERS + code.length);
  // ELF header: 64-bit, little-endian, version 1, System V; an executable for x86-64.
  Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]).copy(elf, 0);
  elf.writeUInt16LE(2, 16);
  elf.writeUInt16LE(0x3e, 18);
  elf.writeUInt32LE(1, 20);
  elf.writeBigUInt64LE(BigInt(BASE + HEADERS), 24); // entry: the code, right after the headers
  elf.writeBigUInt64LE(64n, 32); // program headers right after this one
  elf.writeUInt16LE(64, 52);
  elf.writeUInt16LE(56, 54);
  elf.writeUInt16LE(1, 56);
  // The one program header: the whole file loaded read+execute at BASE.
  elf.writeUInt32LE(1, 64); // PT_LOAD
  elf.writeUInt32LE(5, 68); // PF_R | PF_X
  elf.writeBigUInt64LE(BigInt(BASE), 80);
  elf.writeBigUInt64LE(BigInt(BASE), 88);
  elf.writeBigUInt64LE(BigInt(elf.length), 96);
  elf.writeBigUInt64LE(BigInt(elf.length), 104);
  elf.writeBigUInt64LE(0x1000n, 112);
  code.copy(elf, HEADERS);
  return elf;
}
