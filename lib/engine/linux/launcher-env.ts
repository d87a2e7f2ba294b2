/**
 * The whole environment of every host-side launcher (the shell that joins cgroups, nsenter,
 * bwrap, the process runtime's Perl launcher, mount): fixed and ours. A container's Env never
 * reaches them, because they run as host root and read their environment before any sandbox
 * exists: `BASH_ENV` or `ENV` would run a command in the launcher shell, `LD_PRELOAD` or
 * `LD_LIBRARY_PATH` would load a library into nsenter or bwrap, `PATH` would pick the programs,
 * `IFS` would split the script. The container's environment travels apart (the sandbox's
 * env-args.ts, the process runtime's descriptor 3).
 */
export const LAUNCHER_ENV: Readonly<Record<string, string>> = Object.freeze({ PATH: '/usr/sbin:/usr/bin:/sbin:/bin' });
