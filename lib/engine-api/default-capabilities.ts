/**
 * Docker's default capability set (moby oci/caps/defaults.go), in its order: what a container
 * has without `--cap-add`. Adding any other one (SYS_ADMIN, NET_ADMIN, SYS_PTRACE…) reaches the
 * host. Written once here: the sandbox grants these, the tenant policy lets only these be added.
 */
export const DEFAULT_CAPABILITY_NAMES: readonly string[] = [
  'CHOWN', 'DAC_OVERRIDE', 'FSETID', 'FOWNER', 'MKNOD', 'NET_RAW', 'SETGID', 'SETUID', 'SETFCAP', 'SETPCAP', 'NET_BIND_SERVICE', 'SYS_CHROOT',
  'KILL', 'AUDIT_WRITE',
];

/** {@link DEFAULT_CAPABILITY_NAMES} as a set. */
export const DEFAULT_CAPABILITIES: ReadonlySet<string> = new Set(DEFAULT_CAPABILITY_NAMES);
