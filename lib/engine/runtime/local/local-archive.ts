import { PassThrough, type Readable } from 'node:stream';
import { posix } from 'node:path';
import { EngineError } from '../../../engine-api/engine-error.js';
import type { ContainerPathStat, PutArchiveOptions } from '../../../engine-api/container-operations.js';
import type { ExecutorFilesystem, LocalContainer, LocalExecProcess, LocalExecRun } from './local-container.js';

/** Go's os.FileMode type bits, which `X-Docker-Container-Path-Stat` carries (the Docker CLI tests ModeDir and ModeSymlink). */
const GO_MODE = { dir: 2 ** 31, symlink: 2 ** 27, device: 2 ** 26, pipe: 2 ** 25, socket: 2 ** 24, setuid: 2 ** 23, setgid: 2 ** 22, charDevice: 2 ** 21, sticky: 2 ** 20 };

/**
 * `docker cp` for containers with their own root filesystem, done by `stat` and `tar` run inside
 * the running container (as `kubectl cp` does): every path is resolved by the container's own
 * kernel view (its mounts, and symlinks that cannot point out of it), never by the host, so a
 * symlink swapped in by the container cannot make the copy read or write a host file. The image
 * needs `tar` and `stat` (busybox has both). A container that is not running is copied from or
 * into through the filesystem's `copyOffline` (a fresh sandbox on its root filesystem).
 */
export class LocalArchive {
  constructor(
    /** The executor's `docker exec`. */
    private readonly exec: (run: LocalExecRun) => Promise<LocalExecProcess>,
    private readonly filesystem: ExecutorFilesystem,
  ) {}

  async stat(c: LocalContainer, path: string, ref: string): Promise<ContainerPathStat> {
    const clean = absolute(path);
    const out = await this.collect(c, ['stat', '-c', '%f|%s|%Y', '--', clean]);
    if (out.code !== 0) throw EngineError.notFound(`Could not find the file ${path} in container ${ref}`);
    const [rawMode = '0', size = '0', mtime = '0'] = out.stdout.trim().split('|');
    const mode = parseInt(rawMode, 16);
    let linkTarget = '';
    if ((mode & 0o170000) === 0o120000) linkTarget = (await this.collect(c, ['readlink', '--', clean])).stdout.replace(/\n$/, '');
    return { name: posix.basename(clean) || '/', size: Number(size), mode: goMode(mode), mtime: new Date(Number(mtime) * 1000).toISOString(), linkTarget };
  }

  async get(c: LocalContainer, path: string, ref: string, signal: AbortSignal): Promise<{ stat: ContainerPathStat; tar: Readable }> {
    const stat = await this.stat(c, path, ref);
    const clean = absolute(path);
    const dir = posix.dirname(clean);
    const base = clean === '/' ? '.' : posix.basename(clean);
    const tar = new PassThrough();
    let proc: LocalExecProcess | undefined;
    let stderr = '';
    proc = await this.run(c, ['tar', '-c', '-f', '-', '-C', dir, '--', base], false, (stream, data) => {
      if (stream === 2) stderr += data.toString();
      else if (!tar.write(data)) {
        proc?.pause();
        tar.once('drain', () => proc?.resume());
      }
    });
    const running = proc;
    signal.addEventListener('abort', () => running.kill('SIGKILL'));
    void running.exited.then((code) => {
      if (code === 0) tar.end();
      else tar.destroy(EngineError.system(`tar in the container failed: ${stderr.trim()}`));
    });
    return { stat, tar };
  }

  async put(c: LocalContainer, path: string, ref: string, input: Readable, { copyUIDGID, signal }: PutArchiveOptions): Promise<void> {
    const stat = await this.stat(c, path, ref);
    if ((stat.mode & GO_MODE.dir) === 0) throw EngineError.invalidParameter('extraction point is not a directory');
    let stderr = '';
    // tar itself refuses to replace a directory with a non-directory and the reverse, which is what
    // noOverwriteDirNonDir (sent by every `docker cp`) asks; without it such a replacement fails too,
    // as a 400 naming tar's complaint, never silently. `-o` gives files to the extracting user
    // (the container's root), as dockerd does unless copyUIDGID asks to keep the archive's owners.
    // With copyUIDGID the archive's ids are kept as numbers (dockerd's archive carries no names to look up).
    const proc = await this.run(c, ['tar', '-x', ...(copyUIDGID ? ['--numeric-owner'] : ['-o']), '-f', '-', '-C', absolute(path)], true, (stream, data) => {
      if (stream === 2) stderr += data.toString();
    });
    signal.addEventListener('abort', () => proc.kill('SIGKILL'));
    input.on('error', () => proc.kill('SIGKILL'));
    input.pipe(proc.stdin!);
    const code = await proc.exited;
    if (code !== 0) throw EngineError.invalidParameter(`could not extract the archive into ${path}: ${stderr.trim() || `tar exited with ${code}`}`);
  }

  private async collect(c: LocalContainer, argv: string[]): Promise<{ code: number; stdout: string }> {
    let stdout = '';
    const proc = await this.run(c, argv, false, (stream, data) => {
      if (stream === 1) stdout += data.toString();
    });
    return { code: await proc.exited, stdout };
  }

  private async run(c: LocalContainer, argv: string[], stdin: boolean, output: (stream: 1 | 2, data: Buffer) => void): Promise<LocalExecProcess> {
    if (c.paused) throw EngineError.conflict(`Container ${c.id} is paused, unpause the container before copying files`);
    if (c.status !== 'running') return this.filesystem.copyOffline(c, argv, stdin, output);
    // As uid 0 and gid 0 with a HOME of its own: the container's /etc/passwd is not read for a copy
    // (it may be a FIFO the container made; dockerd's copy never reads it either).
    const env = c.env.some((e) => e.startsWith('HOME=')) ? c.env : [...c.env, 'HOME=/root'];
    return this.exec({ container: c, argv, env, user: '0:0', workingDir: '/', tty: false, stdin, privileged: false, output });
  }
}

function absolute(path: string): string {
  return posix.normalize(posix.join('/', path));
}

/** A Unix st_mode as Go's os.FileMode. */
function goMode(mode: number): number {
  let out = mode & 0o777;
  switch (mode & 0o170000) {
    case 0o040000: out += GO_MODE.dir; break;
    case 0o120000: out += GO_MODE.symlink; break;
    case 0o010000: out += GO_MODE.pipe; break;
    case 0o140000: out += GO_MODE.socket; break;
    case 0o060000: out += GO_MODE.device; break;
    case 0o020000: out += GO_MODE.device + GO_MODE.charDevice; break;
    default: break;
  }
  if (mode & 0o4000) out += GO_MODE.setuid;
  if (mode & 0o2000) out += GO_MODE.setgid;
  if (mode & 0o1000) out += GO_MODE.sticky;
  return out;
}
