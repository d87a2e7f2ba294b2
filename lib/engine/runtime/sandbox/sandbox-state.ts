import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { EngineError } from '../../../engine-api/engine-error.js';
import type { ContainerSpec } from '../../../engine-api/container-spec.js';
import type { ContainerCgroup } from '../../linux/cgroups.js';
import type { ImageStore } from '../../images/image-store.js';
import type { ImageStoreApi } from '../../images/image-store-types.js';
import { withDefaults } from './default-limits.js';
import { writeIdmapHelper } from './idmap-helper-file.js';
import type { RunningContainer, SandboxHost } from './launch/start-context.js';
import type { NetworkHost } from './network/container-network.js';
import { NetworkUserns } from './network/network-userns.js';
import { SandboxNetworks } from './network/sandbox-networks.js';
import { OverlayRootfs } from './overlay-rootfs.js';
import { rootlessIdentity, rootlessNotice, rootlessStateDir, unprivilegedPortStart, type Rootless } from './rootless.js';
import { checkLimits } from './sandbox-fields.js';
import type { SandboxSettings } from './sandbox-options.js';
import { SandboxRootfs } from './sandbox-rootfs.js';
import { SharedTmpfs } from './shared-tmpfs.js';
import { RootlessTmpfs, type ContainerTmpfs } from './rootless-tmpfs.js';
import type { IdMap } from './userns/id-map.js';
import { OwnerUserns } from './userns/owner-userns.js';
import { RootlessUserns } from './userns/rootless-userns.js';
import type { SandboxUserns } from './userns/sandbox-userns.js';

/**
 * Everything a sandbox runtime holds, made once at construction ({@link openSandboxState}) and
 * passed to each of its parts (sandbox-executor.ts and the files it names): the start's side
 * ({@link SandboxHost}, what the launch stages read) and what create, exec, the filesystem
 * operations, `docker update` and removal read besides.
 */
export interface SandboxState extends SandboxHost {
  /** The options, checked and defaulted (sandbox-options.ts). */
  settings: SandboxSettings;
  stateDir: string;
  /** Not root: who the server runs as (read once); undefined for a root server. */
  rootless: Rootless | undefined;
  /** Rootless: the first port an unprivileged user may bind (lower ones are refused by name); 0 for root. */
  firstPort: number;
  /** Rootless, container root is the server's user: a commit records its files as root's. */
  rootlessMap: IdMap | undefined;
  /** The host's CPUs (NanoCpus is checked against them). */
  cpus: number;
  /** The owners' user namespaces (option `userns`); none without. */
  owners: OwnerUserns | undefined;
  /** The overlays of the containers' roots (root server); none: copies. */
  overlays: OverlayRootfs | undefined;
  /** Rootless with user networks: the user namespace the networks live in. */
  netUserns: Promise<NetworkUserns> | undefined;
  /** Each container's root filesystem (sandbox-rootfs.ts). */
  rootfs: SandboxRootfs;
  /** The image store, once the runtime opened it (sandbox-image-store.ts). */
  images: { store?: Promise<ImageStoreApi>; opened?: ImageStore };
}

/**
 * Makes the runtime's state from its checked options: the state directory (made private), the
 * rootless identity and its user namespaces, the networks' tools and user networks, the tmpfs
 * directories, the owners' ranges and the overlays. Rootless (not root, read once): state under
 * the user's data directory, low ports and undelegated limits refused by name, and a start notice
 * of what is enforced (rootless.ts).
 */
export function openSandboxState(settings: SandboxSettings): SandboxState {
  const { cgroups, defaults } = settings;
  const rootless = rootlessIdentity();
  const stateDir = settings.stateDir ?? (rootless ? rootlessStateDir() : mkdtempSync(join(tmpdir(), 'dockgate-sandbox-')));
  const containersDir = join(stateDir, 'containers');
  const hostTool = (name: string): string => (existsSync(`/usr/bin/${name}`) ? `/usr/bin/${name}` : name);
  // Rootless with a subordinate range (and newuidmap/newgidmap): container ids mapped onto it (userns/rootless-userns.ts), unless option userns is false.
  const mapped = rootless && settings.rootlessMapped && existsSync(hostTool('newuidmap')) && existsSync(hostTool('newgidmap'))
    ? RootlessUserns.open(rootless, { unshare: hostTool('unshare'), nsenter: hostTool('nsenter'), setpriv: hostTool('setpriv'), newuidmap: hostTool('newuidmap'), newgidmap: hostTool('newgidmap') }, join(stateDir, 'owner-ranges.json'), settings.rootlessRangeSize)
    : undefined;
  if (rootless) settings.notice(rootlessNotice(cgroups, rootless, mapped ? { ...mapped.range, size: mapped.size, blocks: mapped.blocks } : undefined));
  mkdirSync(containersDir, { recursive: true });
  // Only root may traverse the state directory (made so even when it already exists): it holds
  // the image store and every container's root filesystem copy, with whatever files a container
  // made there, on a host filesystem without nosuid or nodev.
  for (const dir of [stateDir, containersDir]) chmodSync(dir, 0o700);
  const cpus = availableParallelism();
  const limitsOf = (spec: ContainerSpec) => withDefaults(checkLimits(spec, cgroups, cpus), spec, cgroups, defaults);
  const { network, userNets, netUserns, nsTools } = openNetworks(settings, stateDir, containersDir, rootless, mapped);
  // Rootless, the Tmpfs mounts live in a mount namespace of the server's user namespace (rootless-tmpfs.ts).
  const sharedTmpfs: ContainerTmpfs = rootless && netUserns ? new RootlessTmpfs(settings.tmpfsDir, netUserns, { ...nsTools, mount: hostTool('mount'), umount: hostTool('umount') }) : new SharedTmpfs(settings.tmpfsDir);
  const owners = OwnerUserns.open(settings.userns, { unshare: hostTool('unshare'), nsenter: hostTool('nsenter'), setpriv: hostTool('setpriv'), idmap: writeIdmapHelper(stateDir) }, join(stateDir, 'owner-ranges.json'));
  /** The user namespace of a container (its owner's range, owner-userns.ts), from its spec's labels; none without `userns`. */
  const usernsOf = (spec: ContainerSpec): SandboxUserns | undefined => owners?.of(spec.labels);
  // A server that is not root cannot mount an overlay: its containers get a copy of the tree instead (sandbox-rootfs.ts).
  const overlays = process.getuid?.() === 0
    ? new OverlayRootfs(join(stateDir, 'overlays'), { mount: hostTool('mount'), umount: hostTool('umount') }, new Set(readdirSync(containersDir)))
    : undefined;
  const images: SandboxState['images'] = {};
  const rootfs = new SandboxRootfs({
    containersDir, overlays, mapped, usernsOf,
    store: async () => {
      if (!images.store) throw EngineError.system('the image store is not open');
      return images.store;
    },
  });
  return {
    settings, stateDir, rootless, firstPort: rootless ? unprivilegedPortStart() : 0,
    rootlessMap: rootless ? { uid: rootless.uid, gid: rootless.gid, size: 1 } : undefined,
    cpus, owners, overlays, netUserns, rootfs, images,
    bwrap: settings.bwrap, containersDir, network, userNets, sharedTmpfs, seccomp: settings.seccomp,
    tmpfsSize: defaults.tmpfsSize, cgroups, limitsOf, usernsOf, ensureRootfs: (c) => rootfs.ensure(c), hostTool, mapped,
    running: new Map<string, RunningContainer>(), groups: new Map<string, ContainerCgroup>(), stopReasons: new Map<string, string>(),
  };
}

/**
 * The containers' networks. Their own (bridge mode): slirp4netns, with the gates' FIFOs and the
 * stacks' API sockets in a private run directory, short since a socket path has 108 bytes (a
 * temporary directory when the state dir is too deep). User-defined networks make network
 * namespaces, bridges and veths, with iproute2: as root, or rootless in a user namespace the
 * server holds, under which its containers run (network-userns.ts). Without iproute2 their routes
 * answer 501 and NetworkMode stays bridge, host or none.
 */
function openNetworks(settings: SandboxSettings, stateDir: string, containersDir: string, rootless: Rootless | undefined, mapped: RootlessUserns | undefined):
  { network: NetworkHost; userNets: SandboxNetworks | undefined; netUserns: Promise<NetworkUserns> | undefined; nsTools: { ip: string; nsenter: string; unshare: string } } {
  const runDir = join(stateDir, 'run').length < 80 ? join(stateDir, 'run') : mkdtempSync(join(tmpdir(), 'dockgate-net-'));
  mkdirSync(runDir, { recursive: true, mode: 0o700 });
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
  return { network, userNets, netUserns, nsTools };
}
