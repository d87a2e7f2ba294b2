import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { isAbsolute } from 'node:path';
import type { ContainerRuntime } from '../../../engine-api/runtime-types.js';
import { familiarImageRef } from '../../../engine-api/image-ref.js';
import type { LocalExecutor, LocalImage } from '../local/local-container.js';
import { LocalRuntime } from '../local/local-runtime.js';
import { localLimits } from '../local/local-limits.js';
import { createFieldsExcept, UNHONORED_HOST_FIELDS } from '../../../engine-api/create-fields.js';
import { EngineError } from '../../../engine-api/engine-error.js';
import { descendants } from '../local/proc-stats.js';
import { processExec } from './process-exec.js';
import { groupKiller, pipedProcess } from '../local/piped-process.js';
import { envRecord } from '../local/env-record.js';
import { joined, killGroup, ProcessTracker } from './process-cgroup.js';
import type { ContainerCgroup } from '../../linux/cgroups.js';

/** How one allow-listed image runs on the host. */
export interface ProcessImage {
  /**
   * Absolute path of the host executable every container of this image runs. The container's
   * Entrypoint + Cmd supply only its argv: the first element becomes argv[0] (so a multi-call
   * binary such as busybox picks the applet from it), the rest the arguments. A client can
   * never name another host program.
   */
  program: string;
  /** Image default Entrypoint. Defaults to none. */
  entrypoint?: string[];
  /** Image default Cmd, used when the request has none. Defaults to none. */
  cmd?: string[];
  /** Environment entries (`KEY=value`) before the request's Env. Defaults to `PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`. */
  env?: string[];
}

/** Options of {@link processRuntime}. */
export interface ProcessRuntimeOptions {
  /**
   * The allow-list: image reference → how to run it. References are compared in Docker's
   * familiar form, so `busybox`, `busybox:latest` and `docker.io/library/busybox` are one
   * image. A `name:*` entry allows every tag of that name (`busybox:*` serves `busybox:1.36`).
   * Any other image is `No such image` (404). Required, at least one entry.
   */
  images: Record<string, ProcessImage>;
  /**
   * Bytes of output kept per container (both streams together). Older output is dropped beyond
   * it, like a rotated log; output a connected reader has not consumed yet is kept and the child
   * is paused instead (its pipe fills and its writes block). Defaults to 1 MiB.
   */
  maxLogBytes?: number;
  /** Containers kept at once, running or exited; a create beyond it is 409 until some are removed. Defaults to 1000. */
  maxContainers?: number;
  /**
   * Bytes a container's log files may hold together, its LogConfig's `max-size` × `max-file`
   * (`--log-opt max-size=1p --log-opt max-file=999999` would fill the disk); more is a 400 at
   * create naming HostConfig.LogConfig. Defaults to 1 GiB (the default rotation keeps 3 × 10 MiB).
   */
  maxLogFilesBytes?: number;
  /**
   * Track each container by a cgroup v1 pids group of its own, so that kill and rm reach every
   * process it started (a `setsid` child too), and limit its processes ({@link pidsLimit}).
   * Defaults to true; then a server that cannot manage the pids cgroup (not root, cgroup v2) is
   * refused at construction. `false` runs containers untracked: kill and rm then reach the
   * command's process group only, and a child that calls setsid outlives its container.
   */
  cgroups?: boolean;
  /** Most processes at once per container (`pids.max` of its group). Defaults to 2048, podman's default. */
  pidsLimit?: number;
  /** Working directory of every child. The request's WorkingDir is a path inside an image and is not used on the host. Defaults to `os.tmpdir()`. */
  cwd?: string;
}

/** podman's default pids limit (containers.conf `pids_limit`). */
const DEFAULT_PIDS_LIMIT = 2048;

const DEFAULT_ENV = ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'];

/**
 * Unconfined: every container runs as the server's user, on the host's filesystem and network.
 * Whatever would need isolation is refused (by the router, naming it) rather than silently dropped.
 */
const PROCESS_CREATE_FIELDS = createFieldsExcept([
  'User', 'Hostname', 'Domainname', 'WorkingDir', 'Volumes', 'ExposedPorts',
  ...[...UNHONORED_HOST_FIELDS, 'Binds', 'Mounts', 'Tmpfs', 'ReadonlyRootfs', 'CapAdd', 'CapDrop', 'Init'].map((f) => `HostConfig.${f}`),
]);

/**
 * The UNCONFINED embedded runtime (not a sandbox): each container is a child process started without a shell, from an
 * image allow-list the host configures. The environment holds only the image's and the
 * request's entries (nothing of dockgate's own). No TTY is allocated: with `Tty: true` both
 * streams are delivered raw on one stream.
 *
 * @example
 * const runtime = processRuntime({ images: { 'busybox:latest': { program: '/bin/busybox' } } });
 * app.use(engineRouter(runtime));
 */
export function processRuntime(options: ProcessRuntimeOptions): ContainerRuntime {
  const images = validate(options);
  const limits = localLimits(options, 'processRuntime');
  const cwd = options.cwd ?? tmpdir();
  const lookup = (ref: string) => images.get(ref) ?? anyTag(images, ref);
  const tracker = trackerFor(options);
  /** Each running container's group (its execs join it). */
  const groups = new Map<string, ContainerCgroup>();
  const executor: LocalExecutor = {
    images: {
      image: (ref) => lookup(ref)?.image,
      // A `name:*` entry lists as `name:latest`, the tag clients use when they name none.
      list: () => [...images.keys()].map((ref) => lookup(ref.replace(/:\*$/, ':latest'))?.image).filter((i): i is LocalImage => i !== undefined),
    },
    // Children share the server's network stack: `host` is what they really have; `none` would be a lie.
    networks: ['host'],
    createFields: PROCESS_CREATE_FIELDS,
    validate: ({ host }) => {
      const mode = host.networkMode;
      if (mode !== '' && mode !== 'default' && mode !== 'host') {
        throw EngineError.invalidParameter(`HostConfig.NetworkMode "${mode}" is not supported by the process runtime (host only)`);
      }
    },
    exec: {
      // Any running container takes an exec.
      check: () => undefined,
      run: (run) => processExec(run, lookup(run.container.image.ref)!.program, cwd, groups.get(run.container.id)?.procs),
    },
    // Nothing is kept per container beyond its process, nor beyond the containers.
    removed: () => undefined,
    close: async () => undefined,
    start: async ({ id, argv, env, image, openStdin, output }) => {
      const spec = lookup(image.ref)!;
      if (!tracker) return startUntracked(spec.program, argv, env, cwd, openStdin, output);
      let spawned;
      try {
        spawned = tracker.spawn({ id, program: spec.program, argv, env, cwd, openStdin });
      } catch (error) {
        throw EngineError.system(`cannot make the container's cgroup: ${(error as Error).message}`, error);
      }
      const { child, group } = spawned;
      // Like a container's pid 1: when the command exits, whatever it left behind goes too,
      // found by its cgroup (a setsid child has left the process group and the tree).
      child.once('exit', () => void killGroup(group, child));
      const proc = await pipedProcess(child, output, () => ({
        kill: (sig) => (sig === 'SIGKILL' ? void killGroup(group, child) : groupKiller(child)(sig)),
        pids: () => group.pids(),
      })).catch(async (error: unknown) => {
        await group.remove();
        throw error;
      });
      // Started means in its group: a kill or top right after start must find it there.
      await joined(group, child);
      groups.set(id, group);
      return {
        ...proc,
        exited: proc.exited.then(async (code) => {
          groups.delete(id);
          await killGroup(group, child);
          await group.remove();
          return code;
        }),
      };
    },
  };
  return new LocalRuntime('process', executor, limits);
}

/** The cgroup tracker the options ask for, checked once at construction. */
function trackerFor(options: ProcessRuntimeOptions): ProcessTracker | undefined {
  if (options.cgroups !== undefined && typeof options.cgroups !== 'boolean') throw new TypeError('processRuntime option "cgroups" must be a boolean');
  const pidsLimit = options.pidsLimit ?? DEFAULT_PIDS_LIMIT;
  if (!Number.isSafeInteger(pidsLimit) || pidsLimit < 1) throw new TypeError('processRuntime option "pidsLimit" must be a positive integer');
  if (options.cgroups === false) return undefined;
  const tracker = ProcessTracker.detect(pidsLimit);
  if (!tracker) {
    throw new TypeError('processRuntime tracks each container by a cgroup and cannot manage the cgroup v1 pids controller here (it needs root on a cgroup v1 host); option "cgroups: false" runs containers untracked');
  }
  return tracker;
}

/** Without a cgroup (option `cgroups: false`): the command's own process group is all kill reaches. */
function startUntracked(program: string, argv: string[], env: string[], cwd: string, openStdin: boolean, output: (stream: 1 | 2, data: Buffer) => void) {
  const child = spawn(program, argv.slice(1), {
    argv0: argv[0],
    cwd,
    env: envRecord(env),
    stdio: [openStdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    shell: false,
    detached: true,
  });
  child.once('exit', () => {
    try {
      if (child.pid) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // the group is already empty
    }
  });
  return pipedProcess(child, output, (pid) => ({ kill: groupKiller(child), pids: () => (pid ? [pid, ...descendants(pid)] : []) }));
}

function validate(options: ProcessRuntimeOptions): Map<string, { image: LocalImage; program: string }> {
  if (typeof options !== 'object' || options === null) throw new TypeError('processRuntime options must be an object');
  const { images, cwd } = options;
  if (typeof images !== 'object' || images === null || Object.keys(images).length === 0) {
    throw new TypeError('processRuntime option "images" must map at least one image reference to { program }');
  }
  if (cwd !== undefined && (typeof cwd !== 'string' || !isAbsolute(cwd))) {
    throw new TypeError('processRuntime option "cwd" must be an absolute path');
  }
  const out = new Map<string, { image: LocalImage; program: string }>();
  for (const [name, spec] of Object.entries(images)) {
    if (typeof spec?.program !== 'string' || !isAbsolute(spec.program)) {
      throw new TypeError(`processRuntime option "images['${name}'].program" must be an absolute path`);
    }
    const ref = familiarImageRef(name);
    out.set(ref, {
      program: spec.program,
      image: {
        ref,
        id: imageId(ref, spec.program),
        ...(spec.entrypoint ? { entrypoint: [...spec.entrypoint] } : {}),
        ...(spec.cmd ? { cmd: [...spec.cmd] } : {}),
        env: spec.env ? [...spec.env] : DEFAULT_ENV,
        ...programFacts(spec.program),
      },
    });
  }
  return out;
}

/** The `name:*` entry covering a tagged reference, as an image of that exact reference. */
function anyTag(images: Map<string, { image: LocalImage; program: string }>, ref: string): { image: LocalImage; program: string } | undefined {
  const colon = ref.lastIndexOf(':');
  if (colon <= ref.lastIndexOf('/') || ref.includes('@')) return undefined;
  const entry = images.get(`${ref.slice(0, colon)}:*`);
  if (!entry) return undefined;
  return { program: entry.program, image: { ...entry.image, ref, id: imageId(ref, entry.program) } };
}

function imageId(ref: string, program: string): string {
  return `sha256:${createHash('sha256').update(`${ref}\0${program}`).digest('hex')}`;
}



/** The image's size and creation time are its program's: what a container of it really runs. */
function programFacts(program: string): { size?: number; created?: Date } {
  try {
    const st = statSync(program);
    return { size: st.size, created: st.mtime };
  } catch {
    return {};
  }
}
