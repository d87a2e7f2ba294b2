import type { ContainerSpec } from '../../../../engine-api/container-spec.js';
import type { LocalExecutor, LocalNetworkSettings, LocalProcess } from '../../local/local-container.js';
import type { BwrapPlan } from '../bwrap-args.js';
import type { Cgroups, ContainerCgroup } from '../../../linux/cgroups.js';
import type { HeldBinds } from '../held-binds.js';
import type { ResolvedUser } from '../passwd.js';
import type { ResourceLimits } from '../../../linux/cgroup-limits.js';
import type { ContainerTmpfs, TmpfsNamespace } from '../rootless-tmpfs.js';
import type { ContainerNetwork, NetworkHost } from '../network/container-network.js';
import type { SandboxNetworks } from '../network/sandbox-networks.js';
import type { Enter, SandboxUserns } from '../userns/sandbox-userns.js';
import type { MappedExec, RootlessUserns } from '../userns/rootless-userns.js';

/** What the executor's `start` is given: the command, the container's id, name and create body, and where its output goes. */
export type StartRun = Parameters<LocalExecutor['start']>[0];

/** What each running container's execs need: how it was built and its cgroups. */
export interface RunningContainer {
  plan: BwrapPlan;
  cgroupProcs: readonly string[];
  spec: ContainerSpec;
  /** Its environment as started (the image's and its own): what a legacy link on the default bridge passes on (network/bridge-links.ts). */
  env?: readonly string[];
  /** Rootless with Tmpfs mounts: the mount namespace holding them, which its execs enter (rootless-tmpfs.ts). */
  tmpfsNs?: TmpfsNamespace;
  /** Rootless, a non-root container user: how its execs go into its nested user namespace. */
  mappedExec?: MappedExec;
}

/** The runtime's side of a start: its tools, directories and settings, and the registries a start fills. */
export interface SandboxHost {
  /** Path of the bubblewrap binary. */
  bwrap: string;
  /** `stateDir/containers`: each container's directory (its root filesystem copy, network files, seccomp filter). */
  containersDir: string;
  /** What a container's own network (slirp4netns) is made with. */
  network: NetworkHost;
  /** User-defined networks; none when the server cannot make them (not root, no iproute2). */
  userNets: SandboxNetworks | undefined;
  /** The host directories behind the containers' Tmpfs mounts. */
  sharedTmpfs: ContainerTmpfs;
  /** Whether containers run under the seccomp filter. */
  seccomp: boolean;
  /** Bytes of a Tmpfs mount without `size=`. */
  tmpfsSize: number;
  /** The cgroup controllers the server manages; none when option `cgroups` is false. */
  cgroups: Cgroups | undefined;
  /** A container's resource limits, defaults added. */
  limitsOf(spec: ContainerSpec): ResourceLimits;
  /** A container's user namespace (its owner's range); none without option `userns`. */
  usernsOf(spec: ContainerSpec): SandboxUserns | undefined;
  /** The container's root filesystem copy, made at its first start. */
  ensureRootfs(c: { id: string; image: { id: string }; spec: ContainerSpec }): Promise<string>;
  /** Rootless with a subordinate range: the namespace mapping it (userns/rootless-userns.ts); none otherwise. */
  mapped: RootlessUserns | undefined;
  /** A host tool's path (`/usr/bin/NAME` when there, else NAME on PATH). */
  hostTool(name: string): string;
  /** Each running container, for its execs. */
  running: Map<string, RunningContainer>;
  /** Each running container's cgroups (after `docker update`, the current ones). */
  groups: Map<string, ContainerCgroup>;
  /** Containers the disk cap killed, with why. */
  stopReasons: Map<string, string>;
}

/**
 * One start under way: what it was given, and what each stage (start-stages.ts) made, set in
 * stage order. A field marked `!` is set by the stage named beside it before any later stage reads it.
 */
export class StartContext {
  /** network-target: the user networks it starts on (their addresses reserved). */
  userPlan?: ReturnType<SandboxNetworks['prepareStart']>;
  /** network-target: the running container whose network namespace it joins (`--network container:ID`). */
  joined?: { id: string; pid: number };
  /** rootfs: its user namespace, when the runtime has one. */
  userns?: SandboxUserns;
  /** rootfs: its root filesystem (its overlay's merged view, overlay-rootfs.ts). */
  rootfs!: string;
  /** etc: the joined container's /etc/resolv.conf, /etc/hosts and /etc/hostname, bound over its root. */
  joinedFiles?: Record<string, string>;
  /** etc: its own /etc/hostname, /etc/hosts and /etc/resolv.conf (network/etc-files.ts), unless it joins another's. */
  etcFiles?: Record<string, string>;
  /** user: who runs the command. */
  user!: ResolvedUser;
  /** user: the command's environment, HOME and TERM added. */
  env!: string[];
  /** tmpfs: the host directory of each Tmpfs path. */
  tmpfs!: Record<string, string>;
  /** tmpfs: rootless, the mount namespace its Tmpfs mounts are in (entered by its launcher and execs). */
  tmpfsNs?: TmpfsNamespace;
  /** userns: how the launcher enters its user namespace as {@link user}. */
  enter?: Enter;
  /** userns: rootless with a mapped range and a non-root user, how its execs go in (userns/exec-mapped.ts). */
  mappedExec?: MappedExec;
  /** seccomp: its compiled filter. */
  seccompFile?: string;
  /** network: its own network namespace's stack and gate. */
  net?: ContainerNetwork;
  /** cgroups: its groups. */
  group?: ContainerCgroup;
  /** bwrap: how it runs under bubblewrap. */
  plan!: BwrapPlan;
  /** bwrap: bubblewrap's arguments. */
  args!: string[];
  /** launch: the launched bwrap. */
  proc!: LocalProcess;
  /** connect: its network as inspect shows it. */
  settings?: LocalNetworkSettings;

  constructor(readonly host: SandboxHost, readonly run: StartRun, readonly held: HeldBinds) {}
}
