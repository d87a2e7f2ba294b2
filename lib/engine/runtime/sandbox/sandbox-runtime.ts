import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { isIPv4 } from 'node:net';
import { rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { EngineError } from '../../../engine-api/engine-error.js';
import { ImageStore } from '../../images/image-store.js';
import type { ImageStoreApi } from '../../images/image-store-types.js';
import { withSeedAliases } from './sandbox-images.js';
import { isDomain } from '../../../reference/repository-name.js';
import type { ContainerCreateBody, ContainerRuntime } from '../../../engine-api/runtime-types.js';
import type { LocalExecutor, LocalProcess } from '../local/local-container.js';
import { hostPathOf } from '../local/container-mounts.js';
import { LocalRuntime } from '../local/local-runtime.js';
import { localLimits } from '../local/local-limits.js';
import { bindSpecs, bwrapArgs, tmpfsPaths, type BwrapPlan } from './bwrap-args.js';
import { HeldBinds } from './held-binds.js';
import { resolveUserIn } from './passwd.js';
import { checkLimits, refuseUnsupported } from './sandbox-fields.js';
import { Cgroups, type ContainerCgroup } from './cgroups.js';
import { cgroupInfo } from './cgroup-info.js';
import { CGROUP_HOST_FIELDS } from './resource-limits.js';
import { launchSandbox } from './sandbox-process.js';
import { sandboxExec } from './sandbox-exec.js';
import { SharedTmpfs } from './shared-tmpfs.js';
import { RootfsSpares } from './rootfs-spares.js';
import { sandboxDefaults, withDefaults } from './default-limits.js';
import { tmpfsMount } from './tmpfs-options.js';
import { diffTrees, sizeOfChanges } from '../local/diff-trees.js';
import { exportRootfs } from './sandbox-export.js';
import { copyImagePath } from './image-path-copy.js';
import { changesLayer } from '../../images/store/changes-layer.js';
import { runOnRootfs } from './sandbox-offline.js';
import { prepareSeccomp, seccompSupported } from './seccomp/container-seccomp.js';
import { SandboxUserns } from './userns/sandbox-userns.js';
import { OwnerUserns } from './userns/owner-userns.js';
import type { IdMap } from './userns/id-map.js';
import { ContainerNetwork, ensureEtc, mountPoint, ownsNetwork, type NetworkHost, type UserNetworkPlan } from './network/container-network.js';
import { SandboxNetworks } from './network/sandbox-networks.js';
import { joinedContainerId } from '../local/joined-container.js';
import { guardOwnerDisk } from './owner-disk-guard.js';

/** Options of {@link sandboxRuntime}. */
export interface SandboxRuntimeOptions {
  /**
   * Directory of the runtime's state: `images/` (the content-addressed image store) and
   * `containers/<id>/` (each container's record, kept output and writable root filesystem copy),
   * all of which survive a restart. Defaults to a new directory under `os.tmpdir()`.
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
   * is then the server's user, as before). Not root: off, and asking for it is an error.
   */
  userns?: boolean | IdMap;
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
  /** Milliseconds from the end of one walk of the owners' trees (for `maxOwnerDiskBytes`) to the next. Defaults to 10000. */
  diskCheckIntervalMs?: number;
}

/** Terminal size of a Tty container until the client's first resize (dockerd's default for a console). */
const DEFAULT_TTY = { rows: 24, cols: 80 };

/**
 * The isolating embedded runtime: each container runs under bubblewrap in its own mount, PID,
 * IPC, UTS, network and cgroup namespaces, in a user namespace mapping its ids onto an unprivileged host
 * range (option `userns`), under a seccomp filter like Docker's default profile (option
 * `seccomp`), rooted at its own writable copy of its image's root filesystem, with its own /proc,
 * a minimal /dev and its own cgroups read-only at /sys/fs/cgroup. Its own network (NetworkMode
 * unset, `default` or `bridge`) is served by slirp4netns. Images come from a
 * content-addressed {@link ImageStore} under `stateDir/images` (pull, load, save, tag, rmi,
 * prune), whose config (Cmd, Entrypoint, Env, WorkingDir, User, StopSignal, Labels) is applied at
 * create. Container records and output live under `stateDir/containers` and survive a restart.
 *
 * Honored: Cmd, Entrypoint, Env, WorkingDir, User (`user[:group]`, names from the image's
 * /etc/passwd and /etc/group), Hostname, Labels, Tty (a pty: `test -t 1` is true, resize works),
 * OpenStdin, StopSignal, StopTimeout, ReadonlyRootfs, AutoRemove, Init, NetworkMode (the default
 * and `bridge`: a network namespace of its own behind slirp4netns, which cannot reach the host's
 * loopback; `host`; `none`), PortBindings and PublishAllPorts (tcp and udp, IPv4), ExposedPorts,
 * Binds and bind Mounts (ro/rw), Tmpfs (`size=`, `mode=`, up to the tmpfsSize cap),
 * CapAdd/CapDrop (from dockerd's default capability set). Every other isolation or
 * resource field is refused with a 400 naming it.
 *
 * @example
 * app.use(engineRouter(sandboxRuntime({ stateDir: '/var/lib/dockgate' })));
 */
export function sandboxRuntime(options: SandboxRuntimeOptions = {}): ContainerRuntime {
  if (typeof options !== 'object' || options === null) throw new TypeError('sandboxRuntime options must be an object');
  const limits = localLimits(options, 'sandboxRuntime');
  const bwrap = options.bwrap ?? 'bwrap';
  const probe = spawnSync(bwrap, ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new TypeError(`sandboxRuntime needs bubblewrap: "${bwrap}" was not found or failed (install the Debian package "bubblewrap")`);
  }
  if (options.stateDir !== undefined && (typeof options.stateDir !== 'string' || !isAbsolute(options.stateDir))) {
    throw new TypeError('sandboxRuntime option "stateDir" must be an absolute path');
  }
  const insecureRegistries = options.insecureRegistries ?? [];
  if (!Array.isArray(insecureRegistries) || !insecureRegistries.every((h) => typeof h === 'string' && isDomain(h))) {
    throw new TypeError('sandboxRuntime option "insecureRegistries" must be a list of registry hosts (host[:port])');
  }
  const seedTags = options.seedTags ?? ['busybox:latest', 'alpine:latest'];
  if (!Array.isArray(seedTags) || !seedTags.every((t) => typeof t === 'string' && t !== '')) {
    throw new TypeError('sandboxRuntime option "seedTags" must be a list of image references');
  }
  const seedRepositories = options.seedRepositories ?? ['busybox', 'alpine'];
  if (!Array.isArray(seedRepositories) || !seedRepositories.every((r) => typeof r === 'string' && r !== '')) {
    throw new TypeError('sandboxRuntime option "seedRepositories" must be a list of repository names');
  }
  const stateDir = options.stateDir ?? mkdtempSync(join(tmpdir(), 'dockgate-sandbox-'));
  const busybox = options.busybox ?? '/bin/busybox';
  const containersDir = join(stateDir, 'containers');
  mkdirSync(containersDir, { recursive: true });
  // Only root may traverse the state directory (made so even when it already exists): it holds
  // the image store and every container's root filesystem copy, with whatever files a container
  // made there, on a host filesystem without nosuid or nodev.
  for (const dir of [stateDir, containersDir]) chmodSync(dir, 0o700);
  let store: Promise<ImageStoreApi> | undefined;
  if (options.cgroups !== undefined && typeof options.cgroups !== 'boolean') throw new TypeError('sandboxRuntime option "cgroups" must be a boolean');
  const cgroups = options.cgroups === false ? undefined : Cgroups.detect();
  const defaults = sandboxDefaults(options, cgroups);
  const limitsOf = (body: ContainerCreateBody) => withDefaults(checkLimits(body, cgroups, cpus), body, cgroups, defaults);
  const cpus = availableParallelism();
  if (options.tmpfsDir !== undefined && (typeof options.tmpfsDir !== 'string' || !isAbsolute(options.tmpfsDir))) {
    throw new TypeError('sandboxRuntime option "tmpfsDir" must be an absolute path');
  }
  if (options.seccomp !== undefined && typeof options.seccomp !== 'boolean') throw new TypeError('sandboxRuntime option "seccomp" must be a boolean');
  const seccomp = options.seccomp !== false;
  if (seccomp && !seccompSupported()) {
    throw new TypeError(`sandboxRuntime option "seccomp": the seccomp filter has no system call table for ${process.arch} (x86_64 only); pass seccomp: false to run containers without one`);
  }
  const slirp4netns = options.slirp4netns ?? 'slirp4netns';
  if (spawnSync(slirp4netns, ['--version']).status !== 0) {
    throw new TypeError(`sandboxRuntime needs slirp4netns for its containers' own networks: "${slirp4netns}" was not found or failed (install the Debian package "slirp4netns")`);
  }
  const publishHostIp = options.publishHostIp ?? '0.0.0.0';
  if (typeof publishHostIp !== 'string' || !isIPv4(publishHostIp)) throw new TypeError('sandboxRuntime option "publishHostIp" must be an IPv4 address');
  // The gates' FIFOs and the stacks' API sockets (removed after each container): private, and
  // short, since a socket path has 108 bytes; a temporary directory when the state dir is too deep.
  const runDir = join(stateDir, 'run').length < 80 ? join(stateDir, 'run') : mkdtempSync(join(tmpdir(), 'dockgate-net-'));
  mkdirSync(runDir, { recursive: true, mode: 0o700 });
  const network: NetworkHost = { slirp4netns, runDir, defaultHostIp: publishHostIp };
  // User-defined networks need root (they make network namespaces, bridges and veths) and iproute2;
  // without either their routes answer 501 and NetworkMode stays bridge, host or none.
  const ipTool = ['/usr/sbin/ip', '/sbin/ip', '/usr/bin/ip'].find((p) => existsSync(p));
  const userNets = process.getuid?.() === 0 && ipTool
    ? new SandboxNetworks(join(stateDir, 'networks.json'), { ip: ipTool, nsenter: existsSync('/usr/bin/nsenter') ? '/usr/bin/nsenter' : 'nsenter', unshare: existsSync('/usr/bin/unshare') ? '/usr/bin/unshare' : 'unshare' }, (id) => join(containersDir, id, 'resolv.conf'))
    : undefined;
  userNets?.keepOnly(new Set(readdirSync(containersDir)));
  const sharedTmpfs = new SharedTmpfs(options.tmpfsDir ?? `/dev/shm/dockgate-${process.getuid?.() ?? 0}`);
  /** What each running container's execs need: how it was built and its cgroups. */
  const running = new Map<string, { plan: BwrapPlan; cgroupProcs: readonly string[]; body: ContainerCreateBody }>();
  /** Each running container's cgroups (after `docker update`, the current ones). */
  const groups = new Map<string, ContainerCgroup>();
  /** Containers the disk cap killed, with why (their exit's State.Error; owner-disk-guard.ts). */
  const stopReasons = new Map<string, string>();
  const hostTool = (name: string): string => (existsSync(`/usr/bin/${name}`) ? `/usr/bin/${name}` : name);
  const owners = OwnerUserns.fromOption(options.userns, { unshare: hostTool('unshare'), nsenter: hostTool('nsenter'), setpriv: hostTool('setpriv') }, join(stateDir, 'owner-ranges.json'));
  /** The user namespace of a container (its owner's range, owner-userns.ts), from its create body's labels; none without `userns`. */
  const usernsOf = (body: ContainerCreateBody): SandboxUserns | undefined => owners?.of(body.Labels);

  // Under the user namespace, from the image's copy prepared once for the owner's range; a spare
  // copy made ahead of the next start of the same image for the same range (rootfs-spares.ts).
  const spares = new RootfsSpares(join(stateDir, 'spares'), async (imageId, dest, map) => {
    if (!store) throw EngineError.system('the image store is not open');
    await (await store).materialize(imageId, dest, map);
  });
  /** `{ enter }` made by `make` from the container's user namespace; none without one. */
  const withEnter = async <T>(body: ContainerCreateBody, make: (userns: SandboxUserns) => Promise<T>): Promise<{ enter?: T }> => {
    const userns = usernsOf(body);
    return userns ? { enter: await make(userns) } : {};
  };
  /** The container's root filesystem copy, made once (at its first start or copy): a restarted container keeps its writes, as with dockerd. */
  const ensureRootfs = async (c: { id: string; image: { id: string }; body: ContainerCreateBody }): Promise<string> => {
    const rootfs = join(containersDir, c.id, 'rootfs');
    const map = usernsOf(c.body)?.map;
    const made = !existsSync(rootfs);
    if (made) {
      if (!store) throw EngineError.system('the image store is not open');
      mkdirSync(join(containersDir, c.id), { recursive: true });
      await spares.take(c.image.id, rootfs, map);
    }
    SandboxUserns.checkRootfs(join(containersDir, c.id, 'rootfs.idmap'), map, made);
    return rootfs;
  };
  /** Starts a container whose bind sources are held (`held`): bwrap binds them through their descriptors under the runtime's user namespace. */
  const startHeld = async ({ argv, env, openStdin, output, id, name, body, image, tty }: Parameters<LocalExecutor['start']>[0], held: HeldBinds): Promise<LocalProcess> => {
    stopReasons.delete(id);
    // First: a user network it names may be gone (404 `network x not found`), and nothing is prepared yet to undo.
    const userPlan = ownsNetwork(body) ? userNets?.prepareStart(id, body) : undefined;
    // `--network container:ID` (the id create resolved, checked by the runtime to exist and run):
    // its namespace, found before the tmpfs mounts are made, so that a refusal leaves none behind.
    const joinedId = joinedContainerId(body);
    const joined = joinedId !== undefined && userNets ? userNets.joinTarget(joinedId) : undefined;
    const userns = usernsOf(body);
    const rootfs = await ensureRootfs({ id, image, body });
    // Its /etc/hosts and /etc/resolv.conf are bound over the root (below): an image without /etc
    // gets one of container root's own, or bwrap would make it as host root, read-only to the
    // container. A link at /etc is refused here, before anything is prepared to undo.
    if (ownsNetwork(body) || joined) await ensureEtc(rootfs, userns ? { uid: userns.map.uid, gid: userns.map.gid } : {});
    // `--network container:REF`: the container reads the same /etc/resolv.conf and /etc/hosts as the one it joins, as with dockerd.
    const joinedFiles = joined ? await sharedNetworkFiles(join(containersDir, joined.id), rootfs) : undefined;
    const user = await resolveUserIn(rootfs, typeof body.User === 'string' ? body.User : '');
    // runc sets HOME from the passwd entry when the environment has none.
    const fullEnv = [...env];
    if (!fullEnv.some((e) => e.startsWith('HOME='))) fullEnv.push(`HOME=${user.home}`);
    if (tty && !fullEnv.some((e) => e.startsWith('TERM='))) fullEnv.push('TERM=xterm');
    let tmpfs: Record<string, string>;
    try {
      const options = (body.HostConfig?.Tmpfs ?? {}) as Record<string, unknown>;
      tmpfs = sharedTmpfs.prepare(id, tmpfsPaths(body).map((path) => tmpfsMount(path, options[path], defaults.tmpfsSize)));
    } catch (error) {
      throw EngineError.system(`cannot prepare the container's tmpfs directories: ${(error as Error).message}`, error);
    }
    if (userns) userns.ownByContainerRoot(Object.values(tmpfs));
    const enter = userns ? await userns.enter(user) : undefined;
    const seccompFile = seccomp ? prepareSeccomp(body, join(containersDir, id, 'seccomp.bpf')) : undefined;
    // Its own network namespace (bridge mode): the command waits at bwrap's gate until the stack is up.
    // `--network container:REF` (joined above): the launch enters that running container's network namespace.
    const userNetPlan: UserNetworkPlan | undefined = userPlan && userNets ? {
      ...userPlan,
      attach: (pid) => userNets.attachAll(id, name ?? id.slice(0, 12), pid, !userPlan.internalOnly),
      endpoints: () => userNets.endpoints({ id }),
    } : undefined;
    const net = ownsNetwork(body) ? await ContainerNetwork.prepare(network, id, body, join(containersDir, id), rootfs, userNetPlan).catch((error: unknown) => {
      sharedTmpfs.remove(id);
      throw error;
    }) : undefined;
    const limits = limitsOf(body);
    let group: ContainerCgroup | undefined;
    try {
      group = cgroups?.create(id, limits);
    } catch (error) {
      await net?.stop();
      throw EngineError.system(`cannot set the container's resource limits: ${(error as Error).message}`, error);
    }
    // The groups exist before the plan: the container sees them at /sys/fs/cgroup (cgroup-view.ts).
    const plan: BwrapPlan = {
      rootfs, user, tty: tty === true, tmpfs, ...(seccompFile ? { seccompFile } : {}), ...(group ? { cgroupDirs: group.dirs } : {}),
      ...(userns ? { userns: true, bindSource: (source: string) => held.path(source) } : {}), ...(net ? { files: net.files } : {}), ...(joinedFiles ? { files: joinedFiles } : {}),
    };
    let args: string[];
    try {
      args = [...bwrapArgs(body, plan), ...(net ? ['--unshare-net', ...net.gate.bwrapArgs()] : [])];
    } catch (error) {
      await group?.remove();
      await net?.stop();
      throw error;
    }
    const launched = launchSandbox({
      bwrap,
      args,
      argv,
      env: fullEnv,
      openStdin,
      init: body.HostConfig?.Init === true,
      ...(tty ? { tty: consoleSize(body.HostConfig?.ConsoleSize) } : {}),
      output,
      ...(group ? { cgroupProcs: group.procs } : {}),
      ...(seccompFile ? { seccompFile } : {}),
      ...(enter ? { enter } : {}),
      ...(net ? { descriptors: net.gate.shell() } : {}),
      ...(joined ? { netns: `/proc/${joined.pid}/ns/net`, nsenter: hostTool('nsenter') } : {}),
    }).catch(async (error: unknown) => {
      await group?.remove();
      sharedTmpfs.remove(id);
      await net?.stop();
      throw error;
    });
    const proc = await launched;
    let settings;
    try {
      settings = await net?.connect(proc.exited);
    } catch (error) {
      // bwrap still holds the command at the gate: it never runs.
      proc.kill('SIGKILL');
      await proc.exited;
      await userNets?.stopped(id);
      await group?.remove();
      sharedTmpfs.remove(id);
      await net?.stop();
      throw error;
    }
    running.set(id, { plan, cgroupProcs: group?.procs ?? [], body });
    if (group) groups.set(id, group);
    let oomKilled = false;
    // The OOM count is read, then the (now empty) groups removed, before the exit is reported.
    // The group is looked up at exit: `docker update` may have replaced it meanwhile.
    const exited = proc.exited.then(async (code) => {
      running.delete(id);
      sharedTmpfs.remove(id);
      await userNets?.stopped(id);
      await net?.stop();
      const last = groups.get(id);
      groups.delete(id);
      oomKilled = last?.oomKilled() === true;
      await last?.remove();
      return code;
    });
    return {
      ...proc, exited, oomKilled: () => oomKilled, memoryUsage: () => groups.get(id)?.memoryUsage(), stopReason: () => stopReasons.get(id),
      ...(settings ? { network: settings } : {}),
    };
  };

  const executor: LocalExecutor = {
    image: () => undefined,
    networks: ['bridge', 'host', 'none'],
    ...(userNets ? { userNetworks: userNets } : {}),
    stateDir: containersDir,
    // Named volumes (`local` driver): directories under the state dir, bound in like Binds.
    volumesDir: join(stateDir, 'volumes'),
    // Under the user namespace a volume belongs to container root's host ids in its owner's range, or root in it could not write it.
    ...(owners ? {
      volumeOwner: (labels: Readonly<Record<string, string>> | null | undefined) => {
        const { uid, gid } = owners.of(labels).map;
        return { uid, gid };
      },
    } : {}),
    imageStore: (usage) => {
      store = ImageStore.open(join(stateDir, 'images'), { usage, insecureRegistries, maxLoadBytes: defaults.maxLoadBytes, maxLayerBytes: defaults.maxLayerBytes }).then(async (opened) => {
        // The offline busybox: only names that mean no image yet (a pulled busybox is kept).
        if (existsSync(busybox)) await opened.seedBusybox(seedTags);
        return existsSync(busybox) ? withSeedAliases(opened, seedRepositories) : opened;
      });
      return store;
    },
    // `docker exec`: into the running container's namespaces, capabilities and cgroups (sandbox-exec.ts).
    exec: async (run) => {
      const container = running.get(run.container.id);
      if (!container) throw EngineError.conflict(`Container ${run.container.id} is not running`);
      return sandboxExec(run, {
        bwrap,
        nsenter: hostTool('nsenter'),
        ...(existsSync(busybox) ? { busybox } : {}),
        ...container,
        resolveUser: (spec) => resolveUserIn(container.plan.rootfs, spec),
        ...(await withEnter(run.container.body, (userns) => userns.execEnter())),
      });
    },
    // A volume's first content: what the container's root filesystem copy (made from the image, ids mapped) has there.
    copyImagePath: async (c, path, into) => copyImagePath(await ensureRootfs(c), path, into),
    // `docker cp` runs tar and stat inside the running container (local-archive.ts).
    copiesWithTar: true,
    // `docker commit` and a build's RUN: the changes as a layer, owners moved back out of the
    // user namespace's range so the image holds the ids the container saw (changes-layer.ts).
    commitLayer: async (c, changes, opened) => {
      if (!opened.storeLayer) throw EngineError.unsupported('making layers', 'sandbox');
      return opened.storeLayer(changesLayer(join(containersDir, c.id, 'rootfs'), changes, usernsOf(c.body)?.map));
    },
    resolveUser: async (rootfs, spec) => {
      if (rootfs) return resolveUserIn(rootfs, spec);
      const [user = '', group] = spec.split(':');
      if (!/^\d+$/.test(user) || (group !== undefined && !/^\d+$/.test(group))) throw EngineError.invalidParameter(`unable to find user ${user}: no /etc/passwd in a scratch image (use numeric ids)`);
      return { uid: Number(user), gid: Number(group ?? user) };
    },
    buildDir: join(stateDir, 'build'),
    maxBuildContextBytes: defaults.maxBuildContextBytes,
    // `docker diff`: the container's root filesystem copy against the image's (diff-trees.ts).
    changes: async (c) => {
      const rootfs = join(containersDir, c.id, 'rootfs');
      const opened = store ? await store : undefined;
      if (!existsSync(rootfs) || !opened?.imageRootfs) return [];
      return diffTrees(await opened.imageRootfs(c.image.id, usernsOf(c.body)?.map), rootfs);
    },
    validate: async (body, image) => {
      await refuseUnsupported(body, image, cgroups, cpus, { size: defaults.tmpfsSize, total: defaults.maxTmpfsBytes }, userNets !== undefined);
      userNets?.validate(body);
      // The owner's range is assigned here, at its first create: an owner beyond the server's range is refused before anything is made.
      const userns = usernsOf(body);
      const user = typeof body.User === 'string' ? body.User : '';
      if (userns && user !== '' && image?.rootfs) userns.checkUser(await resolveUserIn(image.rootfs, user), user);
    },
    sizeOfChanges: (c, changes) => sizeOfChanges(join(containersDir, c.id, 'rootfs'), changes),
    // `docker info`: what this server can limit, from the cgroup controllers it found (cgroup-info.ts).
    systemInfo: () => cgroupInfo(cgroups),
    // Spare root filesystem copies go with the runtime.
    close: () => spares.close(),
    // The writable root filesystem copy goes with the container (asynchronously: rm -f answers
    // first); the record and output are removed by the runtime's records.
    removed: (id) => {
      stopReasons.delete(id);
      sharedTmpfs.remove(id);
      userNets?.forget(id);
      void rm(join(containersDir, id, 'rootfs'), { recursive: true, force: true }).catch(() => undefined);
    },
    // `docker cp` on a created or exited container: the image's tar in a fresh sandbox on its root, its volumes and binds mounted.
    // The sources are walked and held as at a start (held-binds.ts) until the copy ends.
    copyOffline: async (c, argv, stdin, output) => {
      const binds = (c.mounts ?? []).filter((m) => m.Type !== 'tmpfs').sort((a, b) => a.Destination.split('/').length - b.Destination.split('/').length)
        .map((m) => ({ source: hostPathOf(m), target: m.Destination, readOnly: !m.RW }));
      const held = await HeldBinds.open(binds);
      try {
        const userns = usernsOf(c.body);
        const proc = await runOnRootfs({
          bwrap, rootfs: await ensureRootfs(c), argv, stdin, output,
          binds: userns ? binds.map((b) => ({ ...b, source: held.path(b.source) })) : binds,
          // As the container's root in its owner's namespace: copied files get the mapped owners.
          ...(userns ? { enter: await userns.enter({ uid: 0, gid: 0 }) } : {}),
          // The copy's own filter: Docker's profile with its capabilities (no CapAdd of the container applies).
          ...(seccomp ? { seccompFile: prepareSeccomp({ Image: c.image.id }, join(containersDir, c.id, 'seccomp-copy.bpf')) } : {}),
        });
        return { ...proc, exited: proc.exited.finally(() => held.close()) };
      } catch (error) {
        await held.close();
        throw error;
      }
    },
    // `docker export`: the host's GNU tar over the root filesystem copy, in a sandbox of its own (sandbox-export.ts).
    exportRootfs: async (c, signal) => exportRootfs({
      bwrap, rootfs: await ensureRootfs(c), signal,
      // Read as the container's root in its owner's namespace: the owners come out unshifted.
      ...(await withEnter(c.body, (userns) => userns.enter({ uid: 0, gid: 0 }))),
    }),
    // Each host bind source walked from / without following and held open while the container
    // runs (held-binds.ts): a link planted on its path since create is a 400, before anything is prepared.
    start: async (run) => {
      const held = await HeldBinds.open(bindSpecs(run.body));
      try {
        const proc = await startHeld(run, held);
        return { ...proc, exited: proc.exited.finally(() => held.close()) };
      } catch (error) {
        await held.close();
        throw error;
      }
    },
    // `docker update`: the limits are checked as at create, written to the running container's
    // groups (made when it had none for a controller, its processes moved in), and kept for its next start.
    update: async (c, update) => {
      const refused = Object.keys(update).filter((field) => !(CGROUP_HOST_FIELDS as readonly string[]).includes(field));
      if (refused.length > 0) {
        throw EngineError.invalidParameter(`${refused.join(', ')}: updating containers is not supported by the sandbox runtime (only ${CGROUP_HOST_FIELDS.join(', ')})`);
      }
      const limits = limitsOf({ ...c.body, HostConfig: { ...(c.body.HostConfig ?? {}), ...update } });
      const entry = running.get(c.id);
      if (!entry || !cgroups) return update;
      let group: ContainerCgroup;
      try {
        group = cgroups.create(c.id, limits);
        const pids = new Set([...(c.process?.pids?.() ?? []), ...(groups.get(c.id)?.pids() ?? [])]);
        for (const pid of pids) for (const procs of group.procs) moveInto(procs, pid);
      } catch (error) {
        // The kernel's word, e.g. EBUSY for a memory limit below what the container already uses.
        throw EngineError.invalidParameter(`Cannot update container ${c.id}: ${(error as Error).message}`);
      }
      groups.set(c.id, group);
      running.set(c.id, { ...entry, cgroupProcs: group.procs });
      return update;
    },
  };
  const runtime = new LocalRuntime('sandbox', executor, limits);
  guardOwnerDisk(runtime, {
    maxBytes: defaults.maxOwnerDiskBytes, intervalMs: defaults.diskCheckIntervalMs, stopReasons,
    rootfs: (id) => join(containersDir, id, 'rootfs'),
    // The image's own unpacked root: its size is that of every range's shifted copy.
    imageRootfs: async (imageId) => (await store)?.imageRootfs?.(imageId, undefined),
  });
  return runtime;
}

/**
 * Moves one process into a group. A launcher's short-lived helpers (the user namespace's staging
 * `mount`s) can exit between listing and moving: a process that is gone (ESRCH) needs no move.
 */
function moveInto(procs: string, pid: number): void {
  try {
    writeFileSync(procs, String(pid));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/** `HostConfig.ConsoleSize` ([height, width], API 1.42) when the client sent one, else 24x80. */
function consoleSize(value: unknown): { rows: number; cols: number } {
  if (Array.isArray(value) && value.length === 2 && value.every((n) => Number.isInteger(n) && n > 0 && n <= 0xffff)) {
    return { rows: value[0] as number, cols: value[1] as number };
  }
  return DEFAULT_TTY;
}

/** The network files of the container whose namespace another joins (`container:ID`), to bind in its root too. */
async function sharedNetworkFiles(targetDir: string, rootfs: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const name of ['resolv.conf', 'hosts']) {
    const file = join(targetDir, name);
    if (existsSync(file) && await mountPoint(rootfs, `/etc/${name}`)) files[`/etc/${name}`] = file;
  }
  return files;
}
