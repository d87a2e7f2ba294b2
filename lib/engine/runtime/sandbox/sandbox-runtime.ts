import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { EngineError } from '../../errors/engine-error.js';
import { signalNumber } from '../../http/signal.js';
import type { ContainerCreateBody, ContainerRuntime } from '../types.js';
import type { LocalExecutor, LocalImage, LocalProcess } from '../local/local-container.js';
import { LocalRuntime } from '../local/local-runtime.js';
import { localLimits } from '../local/local-limits.js';
import { refuseHostFields, UNHONORED_HOST_FIELDS } from '../local/refuse-fields.js';
import { descendants } from '../local/proc-stats.js';
import { sandboxExec } from './sandbox-exec.js';

/** Options of {@link sandboxRuntime}. */
export interface SandboxRuntimeOptions {
  /** Directory holding each container's writable root filesystem copy. Defaults to a new directory under `os.tmpdir()`. */
  stateDir?: string;
  /** Path of the bubblewrap binary. Defaults to `bwrap` found on PATH. */
  bwrap?: string;
  /** Static busybox used to seed the `busybox` image's root filesystem. Defaults to `/bin/busybox`. */
  busybox?: string;
  /** Bytes of output kept per container. Defaults to 1 MiB. */
  maxLogBytes?: number;
  /** Containers kept at once. Defaults to 1000. */
  maxContainers?: number;
}

const APPLETS = ['grep', 'sh', 'id', 'cat', 'touch', 'ls', 'sleep', 'echo', 'hostname', 'ps', 'mkdir', 'rm', 'true', 'false', 'env', 'pwd', 'kill', 'wc', 'head', 'yes', 'dd', 'test', '[', 'tar', 'stat', 'readlink'];

/** HostConfig fields the sandbox cannot honor: refused with a 400 naming the field, never dropped. */
const REFUSED_HOST = [...UNHONORED_HOST_FIELDS, 'Init'];

/**
 * The isolating embedded runtime: each container runs under bubblewrap in its own mount, PID,
 * IPC and UTS namespaces (user namespace too, for `User`), rooted at its own writable copy of the
 * image's root filesystem, with its own /proc and a minimal /dev. Killing the bwrap child tears
 * down the PID namespace (`--die-with-parent`, pid 1 gone → every process gone).
 *
 * Honored: Cmd, Entrypoint, Env, WorkingDir, User (numeric `uid[:gid]`), Hostname, Labels,
 * ReadonlyRootfs, AutoRemove, NetworkMode `host` (the default: there is no bridge to give) and
 * `none`, Binds and bind Mounts (ro/rw), Tmpfs (no options), CapAdd/CapDrop (from dockerd's
 * default capability set). Refused with a 400 naming the field: everything in {@link REFUSED_HOST} when set, Tty.
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
  const stateDir = options.stateDir ?? mkdtempSync(join(tmpdir(), 'dockgate-sandbox-'));
  const busybox = options.busybox ?? '/bin/busybox';
  const baseRootfs = join(stateDir, 'images', 'busybox', 'rootfs');
  seedBusybox(baseRootfs, busybox);
  const image: LocalImage = {
    ref: 'busybox:latest',
    id: 'sha256:' + 'b'.repeat(64),
    cmd: ['sh'],
    env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'],
  };
  const executor: LocalExecutor = {
    // The seed image, until the content-addressed image store lands: every tag of busybox (and
    // alpine, which the demo has always aliased to it) runs the busybox root filesystem.
    image: (ref) => (/^(busybox|alpine):[\w.-]+$/.test(ref) ? { ...image, ref } : undefined),
    validate: refuseUnsupported,
    // The container's writable root filesystem copy goes with it (asynchronously: rm -f answers first).
    removed: (id) => {
      void rm(join(stateDir, 'containers', id), { recursive: true, force: true }).catch(() => undefined);
    },
    // `docker exec`: nsenter into the running container (sandbox-exec.ts).
    exec: (run) => sandboxExec(run, existsSync('/usr/bin/nsenter') ? '/usr/bin/nsenter' : 'nsenter'),
    // `docker cp` runs tar and stat inside the running container (local-archive.ts).
    copiesWithTar: true,
    start: ({ argv, env, openStdin, output, id, body }) => {
      const rootfs = join(stateDir, 'containers', id, 'rootfs');
      rmSync(rootfs, { recursive: true, force: true });
      mkdirSync(join(stateDir, 'containers', id), { recursive: true });
      cpSync(baseRootfs, rootfs, { recursive: true, verbatimSymlinks: true });
      const args = bwrapArgs(rootfs, body);
      const child = spawn(bwrap, [...args, '--', ...argv], {
        env: Object.fromEntries(env.map((e) => splitEnv(e))),
        stdio: [openStdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
      });
      const stdout = child.stdout!;
      const stderr = child.stderr!;
      stdout.on('data', (d: Buffer) => output(1, d));
      stderr.on('data', (d: Buffer) => output(2, d));
      const exited = new Promise<number>((resolve) => {
        child.on('close', (code, signal) => resolve(code ?? 128 + (signal ? signalNumber(signal) : 0)));
      });
      return new Promise<LocalProcess>((resolve, reject) => {
        child.once('error', reject);
        child.once('spawn', () => {
          child.off('error', reject);
          child.on('error', () => undefined);
          resolve({
            pid: child.pid ?? 0,
            ...(child.stdin ? { stdin: child.stdin } : {}),
            exited,
            pause: () => { stdout.pause(); stderr.pause(); },
            resume: () => { stdout.resume(); stderr.resume(); },
            // bwrap is outside the PID namespace; SIGKILL to it kills the namespace's pid 1 via
            // --die-with-parent, and the kernel then kills every process of the namespace.
            kill: (sig = 'SIGTERM') => { child.kill(sig); },
            // The container's processes: everything under bwrap (its init, pid 1 inside, and below).
            pids: () => (child.pid ? descendants(child.pid) : []),
          });
        });
      });
    },
  };
  return new LocalRuntime('sandbox', executor, limits);
}

function refuseUnsupported(body: ContainerCreateBody): void {
  const host = body.HostConfig ?? {};
  refuseHostFields(body, REFUSED_HOST, 'sandbox');
  for (const bind of asArray(host.Binds, 'HostConfig.Binds')) parseBind(bind);
  for (const m of asArray(host.Mounts, 'HostConfig.Mounts')) parseMount(m);
  if (host.Tmpfs !== undefined && host.Tmpfs !== null) {
    if (typeof host.Tmpfs !== 'object' || Array.isArray(host.Tmpfs)) throw EngineError.invalidParameter('HostConfig.Tmpfs must map paths to options');
    for (const [path, opts] of Object.entries(host.Tmpfs as Record<string, unknown>)) {
      if (!path.startsWith('/')) throw EngineError.invalidParameter(`HostConfig.Tmpfs path "${path}" must be absolute`);
      if (opts !== '' && opts !== undefined) throw EngineError.invalidParameter(`HostConfig.Tmpfs options for "${path}" are not supported by the sandbox runtime`);
    }
  }
  for (const field of ['CapAdd', 'CapDrop'] as const) {
    for (const cap of asArray(host[field], `HostConfig.${field}`)) {
      if (typeof cap !== 'string' || !/^(CAP_)?[A-Z_]+$/i.test(cap)) throw EngineError.invalidParameter(`HostConfig.${field}: invalid capability "${String(cap)}"`);
    }
  }
  if (body.Tty === true) throw EngineError.invalidParameter('Tty is not supported by the sandbox runtime yet');
  const mode = host.NetworkMode;
  if (mode !== undefined && mode !== '' && mode !== 'default' && mode !== 'host' && mode !== 'none') {
    throw EngineError.invalidParameter(`HostConfig.NetworkMode "${String(mode)}" is not supported by the sandbox runtime (host or none)`);
  }
  const user = body.User;
  if (typeof user === 'string' && user !== '' && !/^\d+(:\d+)?$/.test(user) && user !== 'root') {
    throw EngineError.invalidParameter(`User "${user}": the sandbox runtime accepts only numeric uid[:gid] or root`);
  }
  if (body.WorkingDir !== undefined && body.WorkingDir !== '' && (typeof body.WorkingDir !== 'string' || !body.WorkingDir.startsWith('/'))) {
    throw EngineError.invalidParameter('WorkingDir must be an absolute path');
  }
}

function bwrapArgs(rootfs: string, body: ContainerCreateBody): string[] {
  const host = body.HostConfig ?? {};
  const args = ['--unshare-pid', '--unshare-ipc', '--unshare-uts', '--die-with-parent', '--new-session'];
  if (host.NetworkMode === 'none') args.push('--unshare-net');
  args.push(host.ReadonlyRootfs === true ? '--ro-bind' : '--bind', rootfs, '/', '--proc', '/proc', '--dev', '/dev');
  for (const bind of asArray(host.Binds, 'HostConfig.Binds')) {
    const b = parseBind(bind);
    args.push(b.readOnly ? '--ro-bind' : '--bind', b.source, b.target);
  }
  for (const m of asArray(host.Mounts, 'HostConfig.Mounts')) {
    const b = parseMount(m);
    args.push(b.readOnly ? '--ro-bind' : '--bind', b.source, b.target);
  }
  for (const path of Object.keys((host.Tmpfs ?? {}) as Record<string, unknown>)) args.push('--tmpfs', path);
  args.push(...capabilityArgs(asArray(host.CapAdd, '') as string[], asArray(host.CapDrop, '') as string[]));
  const user = typeof body.User === 'string' && /^\d+(:\d+)?$/.test(body.User) ? body.User : undefined;
  if (user) {
    const [uid = '0', gid = '0'] = user.split(':'); // dockerd: -u 1000 is uid 1000, gid 0
    args.push('--unshare-user', '--uid', uid, '--gid', gid);
  }
  if (typeof body.Hostname === 'string' && body.Hostname !== '') args.push('--hostname', body.Hostname);
  args.push('--chdir', typeof body.WorkingDir === 'string' && body.WorkingDir !== '' ? body.WorkingDir : '/');
  return args;
}

/** dockerd's default capability set: a container gets these and no others unless CapAdd/CapDrop say so. */
const DEFAULT_CAPS = ['CHOWN', 'DAC_OVERRIDE', 'FSETID', 'FOWNER', 'MKNOD', 'NET_RAW', 'SETGID', 'SETUID', 'SETFCAP', 'SETPCAP', 'NET_BIND_SERVICE', 'SYS_CHROOT', 'KILL', 'AUDIT_WRITE'];

function capabilityArgs(add: string[], drop: string[]): string[] {
  const norm = (c: string): string => c.toUpperCase().replace(/^CAP_/, '');
  const dropped = new Set(drop.map(norm));
  const added = add.map(norm);
  if (added.includes('ALL')) return [...dropped].flatMap((c) => (c === 'ALL' ? ['--cap-drop', 'ALL'] : ['--cap-drop', `CAP_${c}`]));
  const caps = dropped.has('ALL') ? added : [...new Set([...DEFAULT_CAPS, ...added])].filter((c) => !dropped.has(c));
  return ['--cap-drop', 'ALL', ...caps.flatMap((c) => ['--cap-add', `CAP_${c}`])];
}

function asArray(v: unknown, field: string): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw EngineError.invalidParameter(`${field} must be a list`);
  return v;
}

interface BindSpec { source: string; target: string; readOnly: boolean }

/** `/host:/container[:ro|rw]`; named volumes and other options are refused, naming the field. */
function parseBind(bind: unknown): BindSpec {
  const parts = typeof bind === 'string' ? bind.split(':') : [];
  const [source = '', target = '', mode = 'rw'] = parts;
  if (parts.length < 2 || parts.length > 3 || !source.startsWith('/') || !target.startsWith('/')) {
    throw EngineError.invalidParameter(`HostConfig.Binds "${String(bind)}": the sandbox runtime accepts only /host/path:/container/path[:ro|rw]`);
  }
  if (mode !== 'ro' && mode !== 'rw') throw EngineError.invalidParameter(`HostConfig.Binds "${bind as string}": mode "${mode}" is not supported (ro or rw)`);
  if (!existsSync(source)) throw EngineError.invalidParameter(`HostConfig.Binds "${bind as string}": host path does not exist`);
  return { source, target, readOnly: mode === 'ro' };
}

function parseMount(m: unknown): BindSpec {
  const mount = (m ?? {}) as { Type?: unknown; Source?: unknown; Target?: unknown; ReadOnly?: unknown; [k: string]: unknown };
  if (mount.Type !== 'bind') throw EngineError.invalidParameter(`HostConfig.Mounts: Type "${String(mount.Type)}" is not supported by the sandbox runtime (bind only)`);
  for (const k of Object.keys(mount)) {
    if (!['Type', 'Source', 'Target', 'ReadOnly', 'Consistency'].includes(k) && mount[k] !== undefined && mount[k] !== null) {
      throw EngineError.invalidParameter(`HostConfig.Mounts.${k} is not supported by the sandbox runtime`);
    }
  }
  return parseBind(`${String(mount.Source)}:${String(mount.Target)}:${mount.ReadOnly === true ? 'ro' : 'rw'}`);
}

/** A one-binary root filesystem: busybox, applet symlinks, /etc/passwd, empty /tmp. */
function seedBusybox(rootfs: string, busybox: string): void {
  rmSync(rootfs, { recursive: true, force: true });
  for (const d of ['bin', 'etc', 'tmp', 'root', 'proc', 'dev']) mkdirSync(join(rootfs, d), { recursive: true });
  cpSync(busybox, join(rootfs, 'bin', 'busybox'));
  for (const a of APPLETS) symlinkSync('busybox', join(rootfs, 'bin', a as string));
  writeFileSync(join(rootfs, 'etc', 'passwd'), 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/sh\n');
  writeFileSync(join(rootfs, 'etc', 'group'), 'root:x:0:\nnogroup:x:65534:\n');
}

function splitEnv(entry: string): [string, string] {
  const i = entry.indexOf('=');
  return i === -1 ? [entry, ''] : [entry.slice(0, i), entry.slice(i + 1)];
}
