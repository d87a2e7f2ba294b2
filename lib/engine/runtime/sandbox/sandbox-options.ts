import { spawnSync } from 'node:child_process';
import { isIPv4 } from 'node:net';
import { optionChecks } from '../../../options/option-checks.js';
import { isDomain } from '../../../reference/repository-name.js';
import { localLimits, type LocalLimits } from '../local/local-limits.js';
import { Cgroups } from '../../linux/cgroups.js';
import { SANDBOX_DEFAULTS, TMPFS_MOUNTS_AT_CAP, type SandboxDefaults } from './default-limits.js';
import { seccompSupported } from './seccomp/container-seccomp.js';
import { checkIdRange, subordinateIdRange, type IdMap } from './userns/id-map.js';

/** Options of {@link sandboxRuntime}. */
export interface SandboxRuntimeOptions {
  /**
   * Directory of the runtime's state: `images/` (the content-addressed image store) and
   * `containers/<id>/` (each container's record, kept output and writable root filesystem copy),
   * all of which survive a restart. Defaults to a new directory under `os.tmpdir()`; when the
   * server is not root (rootless), to `$XDG_DATA_HOME/dockgate` (`~/.local/share/dockgate`).
   */
  stateDir?: string;
  /** Path of the bubblewrap binary. Defaults to `bwrap` found on PATH. */
  bwrap?: string;
  /**
   * Static busybox the offline `busybox` image is made from, and whose `nsenter` applet switches
   * an exec to another user inside its sandbox (without it, such execs are refused). Defaults to
   * `/bin/busybox`.
   */
  busybox?: string;
  /**
   * References the offline busybox image is tagged with when they name no image yet. Defaults
   * to `busybox:latest` and `alpine:latest` (the demo has always served alpine by busybox).
   */
  seedTags?: string[];
  /**
   * Repositories whose every tag, when it names no image, is served by the offline busybox image
   * at create (tagged on first use). Defaults to `busybox` and `alpine`, as the demo always has;
   * `[]` turns it off. An explicit pull still fetches the real image.
   */
  seedRepositories?: string[];
  /** Registries (`host[:port]`) pulled from over plain HTTP besides 127.0.0.0/8 and localhost. Defaults to none. */
  insecureRegistries?: string[];
  /**
   * Bytes of a container's output held in memory until written to its log files (beyond it the
   * container is paused); the files themselves follow its `LogConfig` rotation. Defaults to 1 MiB.
   */
  maxLogBytes?: number;
  /** Containers kept at once. Defaults to 1000. */
  maxContainers?: number;
  /**
   * Bytes a container's log files may hold together, its LogConfig's `max-size` × `max-file`
   * (`--log-opt max-size=1p --log-opt max-file=999999` would fill the disk); more is a 400 at
   * create naming HostConfig.LogConfig. Defaults to 1 GiB (the default rotation keeps 3 × 10 MiB).
   */
  maxLogFilesBytes?: number;
  /**
   * Honor Memory, MemorySwap, NanoCpus, CpuQuota, CpuPeriod, CpuShares and PidsLimit with cgroup v1
   * groups under the server's own (`…/dockgate/<id>`). Defaults to true; where a controller cannot
   * be managed (no privilege, cgroup v2) the fields needing it are refused, naming them. `false`
   * refuses them all.
   */
  cgroups?: boolean;
  /**
   * Directory on a host tmpfs whose subdirectories back the containers' `Tmpfs` mounts, so that
   * `docker exec` sees the files the container wrote there (`<tmpfsDir>/<id>/<n>`, emptied at
   * each start, removed at exit). Made private (0700) to the server's user. Defaults to
   * `/dev/shm/dockgate-<uid>`.
   */
  tmpfsDir?: string;
  /**
   * Load a seccomp filter equivalent to Docker's default profile into every container and exec
   * (no new user namespaces, no keyctl, bpf, perf_event_open, userfaultfd, kexec, module loading,
   * open_by_handle_at, mount…; see seccomp/default-profile.ts). `HostConfig.SecurityOpt`
   * `seccomp=unconfined` lifts it for one container. Defaults to true; the filter is written for
   * x86_64, and on another architecture the runtime refuses to start unless this is `false`.
   */
  seccomp?: boolean;
  /**
   * Run every container in a user namespace mapping its uids and gids onto an unprivileged host
   * range: container uid n is host uid `uid + n` (gid likewise), so container root and every
   * other container user are ordinary host ids; a root-owned host file is read-only to all of
   * them, and files they make on a bind belong to the mapped ids. The range is cut into ranges of
   * 65536 ids: containers without an owner run on the first, and each owner (the
   * `dockgate.owner` label) on one of its own, assigned at its first container or volume and kept
   * in `stateDir/owner-ranges.json`, so one tenant's files are foreign to another's containers;
   * an owner beyond the range is refused (409) at create. Root filesystems are prepared for a
   * range once per image (a copy with shifted owners). Defaults to on when the server runs as
   * root, with the range of /etc/subuid's `root` entry, else 100000-6653599 (100 ranges);
   * `{ uid, gid, size }` sets the range (`size` host ids); `false` turns it off (container root
   * is then the server's user, as before). Not root: on when the user has a subordinate range
   * in /etc/subuid and /etc/subgid (and newuidmap), mapped as rootless podman maps it (root is
   * the user, 1 to N the range); `{ size }` cuts that range into owners' ranges of `size`
   * container ids each (default: the whole range, for containers without an owner only);
   * `false` keeps one id (container root only).
   */
  userns?: boolean | IdMap | { size: number };
  /**
   * Path of the slirp4netns binary, the user-mode network stack of each container's own network
   * namespace (NetworkMode unset, `default` or `bridge`). Defaults to `slirp4netns` found on PATH;
   * without it the constructor throws (install the Debian package "slirp4netns").
   */
  slirp4netns?: string;
  /**
   * Host address a published port listens on when its binding names none (`-p 8080:80`, `-P`),
   * as dockerd's `--ip`. Defaults to `0.0.0.0` (every interface), as dockerd does; `127.0.0.1`
   * keeps published ports to this machine.
   */
  publishHostIp?: string;
  /**
   * `pids.max` of every container whose create body sets no PidsLimit (-1 there asks for none,
   * as in Docker). Needs the pids cgroup; where it cannot be managed the default is not applied.
   * Defaults to 2048, podman's default.
   */
  pidsLimit?: number;
  /**
   * Bytes of memory (`memory.limit_in_bytes`) of every container whose create body sets no
   * Memory, with as much swap again (MemorySwap -1 in the body: unlimited swap), as dockerd gives
   * `--memory` alone; a body's own Memory replaces it (tenancyPolicy's `maxMemory` caps what a
   * tenant may ask). Applies to a build's RUN containers too. Needs the memory cgroup; where it
   * cannot be managed the default is not applied (setting this option is then an error).
   * Defaults to 1 GiB.
   */
  defaultMemory?: number;
  /** Bytes of each `Tmpfs` mount without `size=`, and the most a `size=` may ask for (more is refused, naming this cap). Defaults to 64 MiB. */
  tmpfsSize?: number;
  /**
   * Bytes all of a container's tmpfs mounts (`Tmpfs`, and `Mounts` of type tmpfs) may hold
   * together, a mount without `size=` counting at `tmpfsSize`; more is refused at create, naming
   * it. At least `tmpfsSize`. Defaults to four times `tmpfsSize` (256 MiB).
   */
  maxTmpfsBytes?: number;
  /** Bytes a `docker load` archive may hold, uncompressed (its spool on disk is bounded by it); more is refused, naming the cap. Defaults to 4 GiB. */
  maxLoadBytes?: number;
  /** Bytes one pulled layer may hold, uncompressed; more fails the pull, naming the cap. Defaults to 4 GiB. */
  maxLayerBytes?: number;
  /** Bytes a `docker build` context may hold, uncompressed (its spool under `stateDir/build` is bounded by it); more fails the build, naming the cap. Defaults to 4 GiB. */
  maxBuildContextBytes?: number;
  /**
   * Bytes one owner's containers and volumes may take on the server's disk together (owner: their
   * `dockgate.owner` label; those without one are not capped): what each container's writes add
   * to its root filesystem copy, beyond the image it started as, plus the volumes labelled with
   * the owner and the unlabelled (anonymous) ones its containers mount, in allocated blocks.
   * Checked every `diskCheckIntervalMs` and before each create, start, volume create, `docker cp`
   * into a container, commit and build: an owner over it has its running containers killed
   * (State.Error names this option) and those operations refused with a 403 naming it, until it
   * removes enough. Defaults to 20 GiB.
   */
  maxOwnerDiskBytes?: number;
  /**
   * Where a rootless server (not root) says at construction which limits it enforces and which
   * it refuses (undelegated cgroups), with the command that delegates them. Defaults to a line
   * on stderr (`console.error`). A root server says nothing.
   */
  notice?: (message: string) => void;
  /** Milliseconds from the end of one walk of the owners' trees (for `maxOwnerDiskBytes`) to the next. Defaults to 10000. */
  diskCheckIntervalMs?: number;
}

/**
 * {@link SandboxRuntimeOptions} checked and defaulted, what sandboxRuntime() reads. Each default
 * is stated on its option above; the limits' defaults are {@link SANDBOX_DEFAULTS} (default-limits.ts).
 */
export interface SandboxSettings {
  /** Output, container count and log files (local-limits.ts). */
  limits: LocalLimits;
  /** The bubblewrap binary, found working. */
  bwrap: string;
  /** An absolute path; undefined: the runtime makes a new directory under `os.tmpdir()`. */
  stateDir: string | undefined;
  busybox: string;
  seedTags: string[];
  seedRepositories: string[];
  insecureRegistries: string[];
  /** The cgroup controllers found; undefined when option `cgroups` is false. */
  cgroups: Cgroups | undefined;
  /** The limits every container gets and the store's size caps. */
  defaults: SandboxDefaults;
  tmpfsDir: string;
  seccomp: boolean;
  /** The slirp4netns binary, found working. */
  slirp4netns: string;
  publishHostIp: string;
  /** The host id range of the user namespaces; undefined: off. */
  userns: IdMap | undefined;
  /** Rootless: container ids per owner's range (option `userns.size`); undefined: the whole subordinate range. */
  rootlessRangeSize: number | undefined;
  /** Rootless: map container ids onto the user's subordinate range when it has one (option `userns` not false). */
  rootlessMapped: boolean;
  /** Where a rootless server's start notice goes. */
  notice: (message: string) => void;
}

const check = optionChecks('sandboxRuntime');
const MIB = 1024 * 1024;

/**
 * Checks and defaults sandboxRuntime's options once, at construction, in the order a reader
 * meets them: a bad one is a TypeError naming it, and a missing bubblewrap or slirp4netns (or a
 * seccomp filter this architecture has no table for) is reported here, before anything is made.
 *
 * @example
 * sandboxOptions({ stateDir: '/var/lib/dockgate', cgroups: false }).defaults.tmpfsSize // 67108864
 */
export function sandboxOptions(options: SandboxRuntimeOptions): SandboxSettings {
  if (typeof options !== 'object' || options === null) throw new TypeError('sandboxRuntime options must be an object');
  const limits = localLimits(options, 'sandboxRuntime');
  const bwrap = options.bwrap ?? 'bwrap';
  const probe = spawnSync(bwrap, ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new TypeError(`sandboxRuntime needs bubblewrap: "${bwrap}" was not found or failed (install the Debian package "bubblewrap")`);
  }
  const stateDir = options.stateDir === undefined ? undefined : check.absolutePath(options.stateDir, 'stateDir');
  const insecureRegistries = check.stringList(options.insecureRegistries ?? [], 'insecureRegistries', 'a list of registry hosts (host[:port])', isDomain);
  const seedTags = check.stringList(options.seedTags ?? ['busybox:latest', 'alpine:latest'], 'seedTags', 'a list of image references', (t) => t !== '');
  const seedRepositories = check.stringList(options.seedRepositories ?? ['busybox', 'alpine'], 'seedRepositories', 'a list of repository names', (r) => r !== '');
  const cgroups = options.cgroups === undefined || check.booleanOption(options.cgroups, 'cgroups') ? Cgroups.detect() : undefined;
  const defaults = sandboxDefaults(options, cgroups);
  const tmpfsDir = options.tmpfsDir === undefined ? `/dev/shm/dockgate-${process.getuid?.() ?? 0}` : check.absolutePath(options.tmpfsDir, 'tmpfsDir');
  const seccomp = options.seccomp === undefined || check.booleanOption(options.seccomp, 'seccomp');
  if (seccomp && !seccompSupported()) {
    throw new TypeError(`sandboxRuntime option "seccomp": the seccomp filter has no system call table for ${process.arch} (x86_64 only); pass seccomp: false to run containers without one`);
  }
  const slirp4netns = options.slirp4netns ?? 'slirp4netns';
  if (spawnSync(slirp4netns, ['--version']).status !== 0) {
    throw new TypeError(`sandboxRuntime needs slirp4netns for its containers' own networks: "${slirp4netns}" was not found or failed (install the Debian package "slirp4netns")`);
  }
  const publishHostIp = options.publishHostIp ?? '0.0.0.0';
  if (typeof publishHostIp !== 'string' || !isIPv4(publishHostIp)) throw new TypeError('sandboxRuntime option "publishHostIp" must be an IPv4 address');
  return {
    limits, bwrap, stateDir, busybox: options.busybox ?? '/bin/busybox', seedTags, seedRepositories, insecureRegistries,
    cgroups, defaults, tmpfsDir, seccomp, slirp4netns, publishHostIp, userns: usernsRange(options.userns), rootlessRangeSize: rootlessRangeSize(options.userns), rootlessMapped: options.userns !== false,
    notice: options.notice === undefined ? (message) => console.error(message) : check.functionOption(options.notice, 'notice'),
  };
}

/** The limit options over {@link SANDBOX_DEFAULTS}, each a positive integer, with the bounds and controllers they need. */
function sandboxDefaults(options: Partial<Record<keyof SandboxDefaults, unknown>>, cgroups: Cgroups | undefined): SandboxDefaults {
  const out = { ...SANDBOX_DEFAULTS };
  for (const key of Object.keys(SANDBOX_DEFAULTS) as (keyof SandboxDefaults)[]) {
    if (options[key] !== undefined) out[key] = check.integerOption(options[key], key, 1);
  }
  // Follows a larger tmpfsSize unless set: a container keeps room for a few mounts of the cap.
  if (options.maxTmpfsBytes === undefined) out.maxTmpfsBytes = TMPFS_MOUNTS_AT_CAP * out.tmpfsSize;
  else if (out.maxTmpfsBytes < out.tmpfsSize) throw new TypeError('sandboxRuntime option "maxTmpfsBytes" must be at least "tmpfsSize" (one mount of the default size)');
  if (options.pidsLimit !== undefined && !cgroups?.controllers.includes('pids')) {
    throw new TypeError('sandboxRuntime option "pidsLimit" needs the cgroup v1 pids controller, which this server cannot manage (or option "cgroups" is false)');
  }
  // A longer delay would fire at once (setTimeout's 32-bit bound): walks back to back.
  if (out.diskCheckIntervalMs > 2 ** 31 - 1) throw new TypeError('sandboxRuntime option "diskCheckIntervalMs" must be at most 2147483647 (about 24 days)');
  // dockerd's floor for a memory limit (linuxMinMemory).
  if (out.defaultMemory < 6 * MIB) throw new TypeError('sandboxRuntime option "defaultMemory" must be at least 6 MiB (dockerd\'s smallest memory limit)');
  if (options.defaultMemory !== undefined && !cgroups?.controllers.includes('memory')) {
    throw new TypeError('sandboxRuntime option "defaultMemory" needs the cgroup v1 memory controller, which this server cannot manage (or option "cgroups" is false)');
  }
  return out;
}

/** Rootless `userns: { size }` (only that key): container ids per owner's range, 2 to 65536; undefined otherwise. */
function rootlessRangeSize(option: unknown): number | undefined {
  if (process.getuid?.() === 0 || typeof option !== 'object' || option === null || Object.keys(option).join() !== 'size') return undefined;
  const { size } = option as { size: unknown };
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 2 || size > 65536) {
    throw new TypeError('sandboxRuntime option "userns.size" must be an integer from 2 to 65536 (container ids per owner: root and size - 1 ids of the subordinate range)');
  }
  return size;
}

/**
 * The `userns` option: on by default for a root server (the range of /etc/subuid's `root` entry,
 * else 100000-6653599: 100 container ranges), `false` off, `{ uid, gid, size }` a range of one's
 * own. Undefined when off. A server that is not root cannot write a full map: asking for one
 * there is a TypeError naming the option.
 */
function usernsRange(option: unknown): IdMap | undefined {
  const root = process.getuid?.() === 0;
  if (option === false || ((option === undefined || option === true || rootlessRangeSize(option) !== undefined) && !root)) return undefined;
  if (option !== undefined && option !== true && (typeof option !== 'object' || option === null)) {
    throw new TypeError('sandboxRuntime option "userns" must be a boolean or { uid, gid, size }');
  }
  if (!root) throw new TypeError('sandboxRuntime option "userns": a server that is not root maps its user\'s own subordinate range (/etc/subuid): it takes only { size }, container ids per owner');
  return option === undefined || option === true ? subordinateIdRange() : checkIdRange(option, 'userns');
}
