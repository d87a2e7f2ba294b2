/**
 * The descriptor bubblewrap reads the filter from (`--seccomp 6`): the launcher shell opens the
 * filter file there ({@link OPEN_SECCOMP}); bubblewrap reads it and closes it before the command
 * starts, so the container never holds it. A single digit: the launcher shell is /bin/sh, and
 * dash's redirections take descriptors 0-9 only. 3 is an exec's PID namespace, 5 the
 * environment file (env-args.ts), 7 the user namespace (userns/enter.ts).
 */
export const SECCOMP_FD = 6;

/** Shell: opens the filter file (the script's first argument) as {@link SECCOMP_FD}; 125 (dockerd's "cannot start") when it cannot. */
export const OPEN_SECCOMP = `exec ${SECCOMP_FD}<"$1" || exit 125; shift`;

/** bwrap's arguments that load the filter the launcher opened, when there is one. */
export function seccompArgs(file: string | undefined): string[] {
  return file === undefined ? [] : ['--seccomp', String(SECCOMP_FD)];
}
