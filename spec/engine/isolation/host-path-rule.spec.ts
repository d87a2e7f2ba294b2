import { describe, expect, test } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * The guard of beneath.ts's rule (host code never follows a path a container or a caller
 * controls, and never walks one with blocking I/O): the calls that follow a path or block the
 * event loop may appear only in the files listed here, each of which touches only paths the
 * server made (its state directory, its own sockets and FIFOs), the kernel's (/proc, cgroupfs)
 * or the operator's (configuration, keys). A new file that needs one is added with its reason,
 * or, when it touches a rootfs, a volume, a build context or a caller's archive, uses beneath.ts
 * (or runs the work inside a sandbox) instead. A listed file that no longer needs it is removed
 * from the list (the lists must match exactly).
 */
const LIB = join(process.cwd(), 'lib');

/** Blocking calls (`readFileSync`, `statSync`, `spawnSync`…): each holds the server's only thread. */
const BLOCKING: Record<string, string> = {
  'cli/htpasswd.ts': 'a command-line tool: the file the operator names',
  'cli/keygen.ts': 'a command-line tool: the key files the operator names',
  'cli/registry-config.ts': "the operator's configuration, read once at start-up",
  'cli/rootless-cgroups.ts': 'a command-line tool: /etc/passwd, for the uid of the user it names',
  'engine/linux/cgroups.ts': 'cgroupfs files of the groups the server makes',
  'engine/linux/cgroup-v2.ts': "the kernel's cgroupfs and /proc/self/cgroup, read once at construction (a rootless server's delegation)",
  'engine/policy/host-reaching-fields.ts': 'realpath of a host bind source against allowedBindDirs at create (host paths the operator allows; a tenant that can write in an allowed directory can swap a checked path before start: see README)',
  'engine/policy/tenant-policy.ts': "realpath of the operator's allowedBindDirs, once at construction",
  'engine/router/system/info-route.ts': "the host's /etc/os-release",
  'engine/router/system/system-routes.ts': "stat of the server's own module file",
  'engine/runtime/local/container-records.ts': "the server's container records in its state directory, at start-up",
  'engine/runtime/local/local-volumes.ts': "volume.json and the volume directories the server makes; a volume's content is read one entry at a time and removed through beneath.ts, off the loop",
  'engine/runtime/local/log-files.ts': "the containers' log files in the server's state directory (written by the server, never mounted in a container)",
  'engine/runtime/local/net-dev.ts': "the kernel's /proc/PID/net/dev and ns links",
  'engine/runtime/local/proc-stats.ts': "the kernel's /proc",
  'engine/runtime/process/process-runtime.ts': 'stat of the program the unconfined process runtime runs (administrators only)',
  'engine/runtime/sandbox/bwrap-args.ts': 'existence of a host bind source (a host path the operator allows; bwrap follows it at start: see README on writable allowed directories)',
  'engine/runtime/sandbox/env-args.ts': "the server's private env-argument files (mkdtemp, 0600, wx) and /proc links",
  'engine/runtime/sandbox/launch/etc.ts': "existence of resolv.conf and hosts in the joined container's state directory (the server's)",
  'engine/runtime/sandbox/masked-paths.ts': "the host's /proc and /sys",
  'engine/runtime/sandbox/network/container-network.ts': "resolv.conf and hosts in the container's state directory (the server's), the host's /etc/resolv.conf",
  'engine/runtime/sandbox/network/launch-gate.ts': "the FIFOs the server makes in its run directory, the kernel's /proc/PID files",
  'engine/runtime/sandbox/network/sandbox-networks.ts': "networks.json and the containers' resolv.conf in the server's state directory",
  'engine/runtime/sandbox/overlay-rootfs.ts': "the overlays directory the server makes (made and listed once at construction), the kernel's /proc/self/mountinfo",
  'engine/runtime/sandbox/rootless.ts': 'host files read once at construction or at a refusal: /proc/sys/net/ipv4/ip_unprivileged_port_start, /etc/subuid and /etc/subgid',
  'engine/runtime/sandbox/sandbox-exec.ts': "readlink of the kernel's /proc/PID/exe",
  'engine/runtime/sandbox/sandbox-export.ts': "the host's /usr and account files bound into the export sandbox",
  'engine/runtime/sandbox/sandbox-options.ts': 'the bwrap and slirp4netns binaries the operator names, run with --version once at construction',
  'engine/runtime/sandbox/sandbox-process.ts': "the kernel's /proc",
  'engine/runtime/sandbox/container-exec.ts': 'existence of the busybox binary the operator names',
  'engine/runtime/sandbox/idmap-helper-file.ts': "the idmap helper the server writes in its state directory",
  'engine/runtime/sandbox/sandbox-filesystem.ts': "existence of a container's root copy in the server's state directory",
  'engine/runtime/sandbox/sandbox-image-store.ts': 'existence of the busybox binary the operator names',
  'engine/runtime/sandbox/sandbox-limits.ts': "cgroup.procs of the groups the server makes",
  'engine/runtime/sandbox/sandbox-rootfs.ts': "the root copy's own directory in the server's state directory (never its content)",
  'engine/runtime/sandbox/sandbox-state.ts': "the server's state directories and host tools, made and checked once at construction",
  'engine/runtime/sandbox/sandbox-teardown.ts': "existence of a removed container's root copy in the server's state directory",
  'engine/runtime/sandbox/seccomp/container-seccomp.ts': "the compiled filter in the container's state directory",
  'engine/runtime/sandbox/userns/id-map.ts': "the host's /etc/subuid and /etc/subgid",
  'engine/runtime/sandbox/userns/owner-ranges.ts': 'stateDir/owner-ranges.json, the per-owner range assignment the server writes',
  'engine/runtime/sandbox/userns/owner-userns.ts': "the user namespaces' staging directory the server makes",
  'engine/runtime/sandbox/userns/sandbox-userns.ts': 'the staging directories and marker file the server makes',
  'engine/runtime/sandbox/userns/user-namespace.ts': "the kernel's /proc/PID uid_map, gid_map and ns links",
  'engine/runtime/sandbox/userns/held-namespace.ts': "the kernel's /proc/PID ns links of a holder process the server started",
  'engine/runtime/sandbox/userns/rootless-userns.ts': "the kernel's /proc/PID ns links, and the server's own staging directory under /tmp (made and checked once at start)",
  'engine/runtime/sandbox/userns/ns-reader.ts': "whether the library's own compiled child is there, checked once at construction",
  'keys/generate-signing-key.ts': "the operator's key file",
  'token/authn/htpasswd-authenticator.ts': "the operator's htpasswd file",
  'token/authz/acl-authorizer.ts': "the operator's ACL file",
};

/** Tools run on paths (`cp`, `tar`, `chmod`…), which open every name they are given, as root. */
const PATH_TOOLS: Record<string, string> = {
  'engine/images/store/apply-layer.ts': "mkfifo of a new name in a directory the server holds open (/proc/PID/fd/N/name), nothing followed",
  'engine/images/store/copy-tree.ts': 'cp -a between image roots the store unpacked (no container runs there) into a new directory',
  'engine/images/store/shifted-rootfs.ts': 'cp -a of an image root the store unpacked into a new directory, chown -hR (never following a link) of that fresh copy',
  'engine/images/image-store.ts': 'cp -a of an image root the store unpacked into a new container root, before any of its processes runs',
  'engine/runtime/sandbox/network/launch-gate.ts': "mkfifo of new spare names in the server's run directory (renamed into place per start)",
};

/** Path-following metadata writes from fs/promises (`chmod`, `chown`, `utimes`, `cp`). */
const FOLLOWING_METADATA: Record<string, string> = {
  'engine/listen/listen-engine.ts': "chmod of the server's own socket",
  'engine/images/store/shifted-rootfs.ts': 'chmod of entries (never links) of its own fresh copy of an unpacked image root',
  'engine/images/store/layer-files.ts': 'chmod of the temporary directory it made',
  'engine/images/image-store.ts': "chmod of the store's own directories",
};

const RULES: [string, RegExp, Record<string, string>][] = [
  ['blocking calls', /\b[a-z][A-Za-z]*Sync\s*\(/, BLOCKING],
  ['path tools', /\b(?:spawn|spawnSync|execFile|execFileSync|exec|execSync|runOffLoop)\s*\(\s*['"`](?:cp|tar|chmod|chown|chgrp|rm|mv|ln|mkfifo|mknod|rsync|install|touch|dd)['"`]/, PATH_TOOLS],
  ['path-following metadata writes', /import\s*\{[^}]*\b(?:chmod|chown|utimes|cp)\b[^}]*\}\s*from\s*'node:fs\/promises'/, FOLLOWING_METADATA],
];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** The source without comments, so a comment that names a call is not one. */
function code(file: string): string {
  return readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
}

describe('the host never follows a path a container or a caller controls: calls that follow or block appear only in files that touch server-made paths', () => {
  const files = sources(LIB).map((f) => [relative(LIB, f), code(f)] as const);
  for (const [name, pattern, allowed] of RULES) {
    test(`${name} appear only in the allow-listed files, each with its reason, and every listed file still has one`, () => {
      const found = files.filter(([, text]) => pattern.test(text)).map(([f]) => f).sort();
      expect(found).toEqual(Object.keys(allowed).sort());
      for (const reason of Object.values(allowed)) expect(reason.length).toBeGreaterThan(10);
    });
  }
});
