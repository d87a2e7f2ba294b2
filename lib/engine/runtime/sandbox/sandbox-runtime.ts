import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Beneath } from '../../linux/beneath.js';
import { idmapHelper } from '../../linux/idmap-helper.js';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { EngineError } from '../../../engine-api/engine-error.js';
import { ImageStore } from '../../images/image-store.js';
import type { ImageStoreApi } from '../../images/image-store-types.js';
import { withSeedAliases } from './sandbox-images.js';
import type { ContainerRuntime } from '../../../engine-api/runtime-types.js';
import { containerSpecOf, hostSpecOf, type ContainerSpec } from '../../../engine-api/container-spec.js';
import type { LocalExecutor, LocalProcess } from '../local/local-container.js';
import { hostPathOf } from '../local/container-mounts.js';
import { LocalRuntime } from '../local/local-runtime.js';
import { bindSpecs } from './bwrap-args.js';
import { HeldBinds } from './held-binds.js';
import { resolveUserIn } from './passwd.js';
import { checkLimits, refuseUnsupported, SANDBOX_CREATE_FIELDS } from './sandbox-fields.js';
import type { ContainerCgroup } from '../../linux/cgroups.js';
import { cgroupInfo } from './cgroup-info.js';
import { CGROUP_HOST_FIELDS } from './resource-limits.js';
import { sandboxExec } from './sandbox-exec.js';
import { SharedTmpfs } from './shared-tmpfs.js';
import { RootlessTmpfs, type ContainerTmpfs } from './rootless-tmpfs.js';
import { NamespaceReader, retryDenied } from './userns/ns-reader.js';
import { OverlayRootfs } from './overlay-rootfs.js';
import { overlayChanges } from './overlay-changes.js';
import { withDefaults } from './default-limits.js';
import { sandboxOptions, type SandboxRuntimeOptions } from './sandbox-options.js';
import { diffTrees, sizeOfChanges } from '../local/diff-trees.js';
import { exportRootfs } from './sandbox-export.js';
import { copyImagePath } from './image-path-copy.js';
import { changesLayer } from '../../images/store/changes-layer.js';
import { runOnRootfs } from './sandbox-offline.js';
import { offlineEtcFiles } from './network/etc-files.js';
import { prepareSeccomp } from './seccomp/container-seccomp.js';
import { SandboxUserns } from './userns/sandbox-userns.js';
import type { IdMap } from './userns/id-map.js';
import { OwnerUserns } from './userns/owner-userns.js';
import type { NetworkHost } from './network/container-network.js';
import { SandboxNetworks } from './network/sandbox-networks.js';
import { NetworkUserns } from './network/network-userns.js';
import { guardOwnerDisk } from './owner-disk-guard.js';
import { runStages } from './launch/stages.js';
import { START_STAGES } from './launch/start-stages.js';
import { StartContext, type RunningContainer, type SandboxHost, type StartRun } from './launch/start-context.js';
import { started } from './launch/started.js';
import { RootlessUserns } from './userns/rootless-userns.js';
import { mappedOwners } from './userns/mapped-owners.js';
import { numericUser, refuseOtherUsers, refusePrivilegedPorts, rootlessIdentity, rootlessNotice, rootlessStateDir, unprivilegedPortStart } from './rootless.js';

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
  const settings = sandboxOptions(options);
  const { limits, bwrap, busybox, seedTags, seedRepositories, insecureRegistries, cgroups, defaults, seccomp } = settings;
  // Rootless (not root, read once): state under the user's data directory, low ports and
  // undelegated limits refused by name, and a start notice of what is enforced (rootless.ts).
  const rootless = rootlessIdentity();
  const firstPort = rootless ? unprivilegedPortStart() : 0;
  /** Rootless, container root is the server's user: a commit records its files as root's. */
  const rootlessMap = rootless ? { uid: rootless.uid, gid: rootless.gid, size: 1 } : undefined;
  const stateDir = settings.stateDir ?? (rootless ? rootlessStateDir() : mkdtempSync(join(tmpdir(), 'dockgate-sandbox-')));
  const containersDir = join(stateDir, 'containers');
  const hostTool = (name: string): string => (existsSync(`/usr/bin/${name}`) ? `/usr/bin/${name}` : name);
  // Rootless with a subordinate range (and newuidmap/newgidmap): container ids mapped onto it (userns/rootless-userns.ts), unless option userns is false.
  const mapped = rootless && options.userns !== false && existsSync(hostTool('newuidmap')) && existsSync(hostTool('newgidmap'))
    ? RootlessUserns.open(rootless, { unshare: hostTool('unshare'), nsenter: hostTool('nsenter'), setpriv: hostTool('setpriv'), newuidmap: hostTool('newuidmap'), newgidmap: hostTool('newgidmap') }, join(stateDir, 'owner-ranges.json'), settings.rootlessRangeSize)
    : undefined;
  // Rootless with a mapped range: reads the server's user is refused, done again inside the namespace (userns/ns-reader.ts).
  const nsReader = mapped ? NamespaceReader.of(mapped) : undefined;
  if (rootless) settings.notice(rootlessNotice(cgroups, rootless, mapped ? { ...mapped.range, size: mapped.size, blocks: mapped.blocks } : undefined));
  mkdirSync(containersDir, { recursive: true });
  // Only root may traverse the state directory (made so even when it already exists): it holds
  // the image store and every container's root filesystem copy, with whatever files a container
  // made there, on a host filesystem without nosuid or nodev.
  for (const dir of [stateDir, containersDir]) chmodSync(dir, 0o700);
  let store: Promise<ImageStoreApi> | undefined;
  /** The store as opened (before the seed aliases wrap it): the runtime waits for its background builds at close. */
  let opened$: ImageStore | undefined;
  const limitsOf = (spec: ContainerSpec) => withDefaults(checkLimits(spec, cgroups, cpus), spec, cgroups, defaults);
  const cpus = availableParallelism();
  // The gates' FIFOs and the stacks' API sockets (removed after each container): private, and
  // short, since a socket path has 108 bytes; a temporary directory when the state dir is too deep.
  const runDir = join(stateDir, 'run').length < 80 ? join(stateDir, 'run') : mkdtempSync(join(tmpdir(), 'dockgate-net-'));
  mkdirSync(runDir, { recursive: true, mode: 0o700 });
  // User-defined networks make network namespaces, bridges and veths, with iproute2: as root, or
  // rootless in a user namespace the server holds, under which its containers run
  // (network-userns.ts). Without iproute2 their routes answer 501 and NetworkMode stays bridge, host or none.
  const ipTool = ['/usr/sbin/ip', '/sbin/ip', '/usr/bin/ip'].find((p) => existsSync(p));
  const nsTools = { ip: ipTool ?? 'ip', nsenter: existsSync('/usr/bin/nsenter') ? '/usr/bin/nsenter' : 'nsenter', unshare: existsSync('/usr/bin/unshare') ? '/usr/bin/unshare' : 'unshare' };
  // With a mapped range, the networks live in its namespace, below which every container runs.
  const netUserns = rootless && ipTool ? (mapped ? mapped.file().then((file) => NetworkUserns.adopt(file, nsTools.nsenter)) : NetworkUserns.start(nsTools)) : undefined;
  // A refusal surfaces at the first start or network use, with the kernel's words.
  netUserns?.catch(() => undefined);
  const network: NetworkHost = { slirp4netns: settings.slirp4netns, runDir, defaultHostIp: settings.publishHostIp, ...(rootless ? { rootless: true } : {}), ...(netUserns ? { userns: netUserns } : {}),
    ...(mapped ? { usernsPath: () => mapped.file() } : {}) };
  const userNets = ipTool
    ? new SandboxNetworks(join(stateDir, 'networks.json'), { ...nsTools, ...(netUserns ? { userns: netUserns } : {}) }, (id) => join(containersDir, id, 'resolv.conf'))
    : undefined;
  userNets?.keepOnly(new Set(readdirSync(containersDir)));
  // Rootless, the Tmpfs mounts live in a mount namespace of the server's user namespace (rootless-tmpfs.ts).
  const sharedTmpfs: ContainerTmpfs = rootless && netUserns ? new RootlessTmpfs(settings.tmpfsDir, netUserns, { ...nsTools, mount: hostTool('mount'), umount: hostTool('umount') }) : new SharedTmpfs(settings.tmpfsDir);
  /** What each running container's execs need: how it was built and its cgroups. */
  const running = new Map<string, RunningContainer>();
  /** Each running container's cgroups (after `docker update`, the current ones). */
  const groups = new Map<string, ContainerCgroup>();
  /** Containers the disk cap killed, with why (their exit's State.Error; owner-disk-guard.ts). */
  const stopReasons = new Map<string, string>();
  const owners = OwnerUserns.open(settings.userns, { unshare: hostTool('unshare'), nsenter: hostTool('nsenter'), setpriv: hostTool('setpriv'), idmap: writeIdmapHelper(stateDir) }, join(stateDir, 'owner-ranges.json'));
  /** The user namespace of a container (its owner's range, owner-userns.ts), from its create body's labels; none without `userns`. */
  const usernsOf = (spec: ContainerSpec): SandboxUserns | undefined => owners?.of(spec.labels);

  // Each container's root: an overlay whose lower layer is the image's tree unpacked once for the
  // owner's range, shared by all of that owner's containers of the image (overlay-rootfs.ts). A
  // server that is not root cannot mount one: its containers get a copy of the tree instead.
  const overlays = process.getuid?.() === 0
    ? new OverlayRootfs(join(stateDir, 'overlays'), { mount: hostTool('mount'), umount: hostTool('umount') }, new Set(readdirSync(containersDir)))
    : undefined;
  /** Where a copy of the image is (a container made by a server before overlays, or by one that is not root). */
  const copyOf = (id: string): string => join(containersDir, id, 'rootfs');
  /** The container's own writes: its overlay's upper layer, or its whole copy. */
  const writableOf = (id: string): { path: string; copy: boolean } => (!overlays || existsSync(copyOf(id)) ? { path: copyOf(id), copy: true } : { path: overlays.paths(id).upper, copy: false });
  /** `{ enter }` made by `make` from the container's user namespace; none without one. */
  const withEnter = async <T>(spec: ContainerSpec, make: (userns: SandboxUserns) => Promise<T>): Promise<{ enter?: T }> => {
    const userns = usernsOf(spec);
    return userns ? { enter: await make(userns) } : {};
  };
  const openStore = async (): Promise<ImageStoreApi> => {
    if (!store) throw EngineError.system('the image store is not open');
    return store;
  };
  /**
   * The container's root filesystem, made at its first start or copy and kept until it is
   * removed: a restarted container keeps its writes, as with dockerd. Its overlay is mounted
   * again when it is not (after a server restart).
   */
  /** The image's tree for the range; when the image was removed since (rmi -f past a stopped container), the one it was mounted on (the store keeps it). */
  const lowerOf = async (opened: ImageStoreApi, c: { id: string; image: { id: string } }, map: IdMap | undefined): Promise<string> => {
    try {
      // The range's layer of owners over the plain tree (shifted-rootfs.ts); the plain tree alone without a range.
      const plain = await opened.imageRootfs!(c.image.id);
      return map ? `${await opened.imageRootfs!(c.image.id, map)}:${plain}` : plain;
    } catch (error) {
      const kept = await overlays?.lowerOf(c.id);
      if (kept !== undefined && kept.split(':').every((dir) => existsSync(dir))) return kept;
      throw error;
    }
  };
  const ensureRootfs = async (c: { id: string; image: { id: string }; spec: ContainerSpec }): Promise<string> => {
    const map = usernsOf(c.spec)?.map;
    const marker = join(containersDir, c.id, 'rootfs.idmap');
    if (!overlays || existsSync(copyOf(c.id))) {
      const made = !existsSync(copyOf(c.id));
      if (made) {
        mkdirSync(join(containersDir, c.id), { recursive: true });
        await (await openStore()).materialize(c.image.id, copyOf(c.id), map);
        // Rootless with owners' ranges: the copy's owners moved into its owner's block (userns/rootless-userns.ts).
        if (mapped) await mapped.shiftCopy(copyOf(c.id), mapped.indexOf(c.spec.labels));
      }
      // Rootless with a mapped range, the marker names the owner's block (host ids of container id 1): a copy made for another is refused.
      SandboxUserns.checkRootfs(marker, map ?? mapped?.blockOf(mapped.indexOf(c.spec.labels)), made);
      return copyOf(c.id);
    }
    const opened = await openStore();
    if (!opened.imageRootfs) throw EngineError.unsupported('image roots', 'sandbox');
    mkdirSync(join(containersDir, c.id), { recursive: true });
    SandboxUserns.checkRootfs(marker, map, !(await overlays.exists(c.id)));
    return overlays.mount(c.id, await lowerOf(opened, c, map));
  };
  const host: SandboxHost = {
    bwrap, containersDir, network, userNets, sharedTmpfs, seccomp, tmpfsSize: defaults.tmpfsSize, cgroups, limitsOf, usernsOf, ensureRootfs, hostTool, mapped,
    running, groups, stopReasons,
  };
  /** Starts a container whose bind sources are held (`held`): its stages (launch/start-stages.ts) run in order, and a failure undoes what the earlier ones made. */
  const startHeld = async (run: StartRun, held: HeldBinds): Promise<LocalProcess> => {
    stopReasons.delete(run.id);
    const ctx = new StartContext(host, run, held);
    await runStages(START_STAGES, ctx);
    return started(ctx);
  };

  const executor: LocalExecutor = {
    networks: ['bridge', 'host', 'none'],
    // Clients (docker-py's tests) create with `runc` and expect it back: the name dockerd's default has.
    ociRuntime: 'runc',
    ...(userNets ? { userNetworks: userNets } : {}),
    stateDir: containersDir,
    // Named volumes (`local` driver): directories under the state dir, bound in like Binds.
    volumes: {
      dir: join(stateDir, 'volumes'),
      // Under the user namespace a volume belongs to container root's host ids in its owner's range, or root in it could not write it.
      ...(owners ? {
        owner: (labels: Readonly<Record<string, string>> | null | undefined) => {
          const { uid, gid } = owners.of(labels).map;
          return { uid, gid };
        },
      } : {}),
    },
    imageStore: (usage) => {
      store = ImageStore.open(join(stateDir, 'images'), {
        usage, insecureRegistries, maxLoadBytes: defaults.maxLoadBytes, maxLayerBytes: defaults.maxLayerBytes,
        // Each new image's tree for the range of containers without an owner (the first), unpacked
        // while the client goes on: their first container mounts it instead of waiting for the copy.
        prepareShifts: () => (owners ? [owners.of(undefined).map] : []),
        // Rootless: files of other owners given them in the mapped namespace, or (a single id) refused by name.
        ...(rootless ? (mapped ? { namespaceOwners: mappedOwners(mapped) } : { onlyRootOwners: true }) : {}),
      }).then(async (opened) => {
        opened$ = opened;
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
        ...(await withEnter(run.container.spec, (userns) => userns.execEnter())),
      });
    },
    createFields: SANDBOX_CREATE_FIELDS,
    validate: async (spec, image) => {
      if (rootless) refusePrivilegedPorts(spec, firstPort, rootless);
      // Rootless with a mapped range, the owner's block is assigned here, at its first create: an owner beyond the range is refused before anything is made.
      mapped?.indexOf(spec.labels);
      await refuseUnsupported(spec, image, cgroups, cpus, { size: defaults.tmpfsSize, total: defaults.maxTmpfsBytes }, userNets !== undefined);
      userNets?.validate(spec);
      // The owner's range is assigned here, at its first create: an owner beyond the server's range is refused before anything is made.
      const userns = usernsOf(spec);
      const { user } = spec;
      if (userns && user !== '' && image?.rootfs) userns.checkUser(await resolveUserIn(image.rootfs, user), user);
      if (rootless && user !== '') {
        const resolved = image?.rootfs ? await resolveUserIn(image.rootfs, user) : numericUser(user);
        if (mapped) mapped.checkUser(resolved, user);
        else refuseOtherUsers(resolved, user, rootless);
      }
    },
    // Each container's own root filesystem copy: diff, commit, export, `docker cp` (tar and stat run
    // inside the running container, local-archive.ts) and a volume's first content.
    filesystem: {
      // A volume's first content: what the container's root filesystem copy (made from the image, ids mapped) has there.
      copyImagePath: async (c, path, into) => copyImagePath(await ensureRootfs(c), path, into),
      // `docker commit` and a build's RUN: the changes as a layer, owners moved back out of the
      // user namespace's range so the image holds the ids the container saw (changes-layer.ts).
      commitLayer: async (c, changes, opened) => {
        if (!opened.storeLayer) throw EngineError.unsupported('making layers', 'sandbox');
        const rootfs = await ensureRootfs(c);
        // Rootless, a file the server's user may not read (a 0700 directory of a range id) is read again inside the namespace (userns/ns-reader.ts).
        return retryDenied(() => opened.storeLayer!(changesLayer(rootfs, changes, usernsOf(c.spec)?.map ?? mapped?.mappingOf(mapped.indexOf(c.spec.labels)) ?? rootlessMap)),
          nsReader && (() => opened.storeLayer!(nsReader.layer(rootfs, changes, mapped!.indexOf(c.spec.labels)))));
      },
      // `docker diff`: an overlay's upper layer against the image's tree (overlay-changes.ts), a copy against the whole tree (diff-trees.ts).
      changes: async (c) => {
        const opened = store ? await store : undefined;
        if (!opened?.imageRootfs) return [];
        const writable = writableOf(c.id);
        // A rootless owner's copy has its owners moved into the owner's block: compared as moved.
        const moved = mapped?.copyOwner(mapped.indexOf(c.spec.labels));
        const image = writable.copy && existsSync(writable.path) ? await opened.imageRootfs(c.image.id, usernsOf(c.spec)?.map) : undefined;
        if (writable.copy) return image ? retryDenied(() => diffTrees(image, writable.path, moved), nsReader && (() => nsReader.diff(image, writable.path, mapped!.indexOf(c.spec.labels)))) : [];
        if (!overlays || !(await overlays.exists(c.id))) return [];
        const merged = await ensureRootfs(c);
        // Against the plain tree (the lowest layer) with owners moved by the range: what the range's layer holds.
        const plain = (await lowerOf(opened, c, usernsOf(c.spec)?.map)).split(':').at(-1)!;
        return overlayChanges(plain, writable.path, merged, usernsOf(c.spec)?.map);
      },
      // What the container wrote: in its upper layer (or copy), each added or modified path is there.
      sizeOfChanges: (c, changes) => sizeOfChanges(writableOf(c.id).path, changes),
      // `docker cp` on a created or exited container: the image's tar in a fresh sandbox on its root, its volumes and binds mounted.
      // The sources are walked and held as at a start (held-binds.ts) until the copy ends.
      copyOffline: async (c, argv, stdin, output) => {
        const userns = usernsOf(c.spec);
        const rootfs = await ensureRootfs(c);
        // Its network files (network/etc-files.ts) first: a bind of the container's own at one of those paths wins.
        // (A root whose /etc is a link gets none: its start refuses it, a copy still works.)
        const etcFiles = await offlineEtcFiles(c.id, c.spec, join(containersDir, c.id), rootfs, userns ? { uid: userns.map.uid, gid: userns.map.gid } : undefined).catch(() => ({}));
        const mounts = (c.mounts ?? []).filter((m) => m.Type !== 'tmpfs').map((m) => ({ source: hostPathOf(m), target: m.Destination, readOnly: !m.RW }));
        const binds = [...Object.entries(etcFiles).filter(([path]) => !mounts.some((m) => m.target === path)).map(([target, source]) => ({ source, target, readOnly: false })), ...mounts]
          .sort((a, b) => a.target.split('/').length - b.target.split('/').length);
        const held = await HeldBinds.open(binds);
        try {
          const proc = await runOnRootfs({
            bwrap, rootfs, argv, stdin, output,
            binds: userns ? binds.map((b) => ({ ...b, source: held.path(b.source) })) : binds,
            // As the container's root in its owner's namespace: copied files get the mapped owners.
            ...(userns ? { enter: await userns.enter({ uid: 0, gid: 0 }) } : mapped ? { enter: await mapped.enter({ uid: 0, gid: 0 }, mapped.indexOf(c.spec.labels)) } : {}),
            // The copy's own filter: Docker's profile with its capabilities (no CapAdd of the container applies).
            ...(seccomp ? { seccompFile: prepareSeccomp(containerSpecOf({ Image: c.image.id }), join(containersDir, c.id, 'seccomp-copy.bpf')) } : {}),
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
        ...(mapped ? { enter: await mapped.enter({ uid: 0, gid: 0 }, mapped.indexOf(c.spec.labels)) } : await withEnter(c.spec, (userns) => userns.enter({ uid: 0, gid: 0 }))),
      }),
    },
    build: {
      dir: join(stateDir, 'build'),
      maxContextBytes: defaults.maxBuildContextBytes,
      resolveUser: async (rootfs, spec) => {
        if (rootfs) return resolveUserIn(rootfs, spec);
        const [user = '', group] = spec.split(':');
        if (!/^\d+$/.test(user) || (group !== undefined && !/^\d+$/.test(group))) throw EngineError.invalidParameter(`unable to find user ${user}: no /etc/passwd in a scratch image (use numeric ids)`);
        return { uid: Number(user), gid: Number(group ?? user) };
      },
    },
    limits: {
      // `docker update`: the limits are checked as at create, written to the running container's
      // groups (made when it had none for a controller, its processes moved in), and kept for its next start.
      update: async (c, update) => {
        const refused = Object.keys(update).filter((field) => !(CGROUP_HOST_FIELDS as readonly string[]).includes(field));
        if (refused.length > 0) {
          throw EngineError.invalidParameter(`${refused.join(', ')}: updating containers is not supported by the sandbox runtime (only ${CGROUP_HOST_FIELDS.join(', ')})`);
        }
        // The update's fields, typed as at create, over the container's spec.
        const updated = hostSpecOf(update);
        const changed = Object.fromEntries(Object.keys(update).map((field) => {
          const key = (field.charAt(0).toLowerCase() + field.slice(1)) as keyof typeof updated;
          return [key, updated[key]];
        }));
        const limits = limitsOf({ ...c.spec, host: { ...c.spec.host, ...changed } });
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
      // `docker info`: what this server can limit, from the cgroup controllers it found (cgroup-info.ts).
      systemInfo: () => ({ ...cgroupInfo(cgroups), ...(rootless ? { SecurityOptions: ['name=rootless'] } : {}) }),
    },
    // Every overlay is unmounted with the runtime (the containers' writes stay for the next server); the networks' records are on disk first.
    close: async () => {
      // An image tree still being prepared in the background holds a mount in the state directory.
      await opened$?.settled();
      await overlays?.close();
      await userNets?.settled();
      await (sharedTmpfs as Partial<RootlessTmpfs>).close?.();
      (await netUserns?.catch(() => undefined))?.stop();
    },
    // The overlay is unmounted and its writes (or the copy) go with the container (asynchronously:
    // rm -f answers first); the record and output are removed by the runtime's records.
    removed: (id) => {
      stopReasons.delete(id);
      void Promise.resolve(sharedTmpfs.remove(id)).catch(() => undefined);
      userNets?.forget(id);
      void overlays?.remove(id).catch(() => undefined);
      // Rootless with a mapped range, the copy holds files of the range's ids: removed by the namespace's root.
      const copy = join(containersDir, id, 'rootfs');
      if (mapped && existsSync(copy)) void mapped.run(['rm', '-rf', '--', copy]).then(() => rm(join(containersDir, id), { recursive: true, force: true })).catch(() => undefined);
      else void Beneath.removeIn(join(containersDir, id), 'rootfs').catch(() => undefined);
    },
    // Each host bind source walked from / without following and held open while the container
    // runs (held-binds.ts): a link planted on its path since create is a 400, before anything is prepared.
    start: async (run) => {
      const held = await HeldBinds.open(bindSpecs(run.spec));
      try {
        const proc = await startHeld(run, held);
        return { ...proc, exited: proc.exited.finally(() => held.close()) };
      } catch (error) {
        await held.close();
        throw error;
      }
    },
  };
  const runtime = new LocalRuntime('sandbox', executor, limits);
  guardOwnerDisk(runtime, {
    maxBytes: defaults.maxOwnerDiskBytes, intervalMs: defaults.diskCheckIntervalMs, stopReasons,
    rootfs: writableOf,
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

/**
 * The idmap helper (linux/idmap-helper.ts) written once in the state directory, 0700 (renamed
 * into place: a helper of a previous server may still be running); none off x86-64.
 */
function writeIdmapHelper(stateDir: string): string | undefined {
  const elf = idmapHelper();
  if (!elf) return undefined;
  const path = join(stateDir, 'idmap-bind');
  writeFileSync(`${path}.new`, elf, { mode: 0o700 });
  chmodSync(`${path}.new`, 0o700);
  renameSync(`${path}.new`, path);
  return path;
}
