import type { ContainerRuntime } from '../../../engine-api/runtime-types.js';
import { LocalRuntime } from '../local/local-runtime.js';
import { guardOwnerDisk } from './owner-disk-guard.js';
import { sandboxExecutor } from './sandbox-executor.js';
import { sandboxOptions, type SandboxRuntimeOptions } from './sandbox-options.js';
import { openSandboxState } from './sandbox-state.js';

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
  // The options checked and defaulted once (sandbox-options.ts), then the state every part reads (sandbox-state.ts).
  const settings = sandboxOptions(options);
  const state = openSandboxState(settings);
  const runtime = new LocalRuntime('sandbox', sandboxExecutor(state), settings.limits);
  const { defaults } = settings;
  guardOwnerDisk(runtime, {
    maxBytes: defaults.maxOwnerDiskBytes, intervalMs: defaults.diskCheckIntervalMs, stopReasons: state.stopReasons,
    rootfs: (id) => state.rootfs.writableOf(id),
    // The image's own unpacked root: its size is that of every range's shifted copy.
    imageRootfs: async (imageId) => (await state.images.store)?.imageRootfs?.(imageId, undefined),
  });
  return runtime;
}
