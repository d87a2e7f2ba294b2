/**
 * The descriptor bubblewrap reads the filter from (`--seccomp 10`): the launcher shell opens the
 * filter file there ({@link OPEN_SECCOMP}); bubblewrap reads it and closes it before the command
 * starts, so the container never holds it.
 */
export const SECCOMP_FD = 10;

/** Shell: opens the filter file (the script's first argument) as {@link SECCOMP_FD}; 125 (dockerd's "cannot start") when it cannot. */
export const OPEN_SECCOMP = `exec ${SECCOMP_FD}<"$1" || exit 125; shift`;

/** bwrap's arguments that load the filter the launcher opened, when there is one. */
export function seccompArgs(file: string | undefined): string[] {
  return file === undefined ? [] : ['--seccomp', String(SECCOMP_FD)];
}
