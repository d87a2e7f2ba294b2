import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { PassThrough, type Readable } from 'node:stream';
import { EngineError } from '../../../engine-api/engine-error.js';
import type { LocalProcess } from '../local/local-container.js';
import { launchSandbox } from './sandbox-process.js';

/** Where the root filesystem copy is seen inside the export's sandbox. */
const ROOT = '/rootfs';

/** The end of a tar archive (two zero blocks): what dockerd sends for an empty filesystem. */
const EMPTY_TAR = Buffer.alloc(1024);

/**
 * The host's tar and what it needs, read-only: Debian's merged /usr (everything lives under
 * /usr, the top-level /bin and /lib are symlinks), and the host's passwd and group files, which
 * name owners in the headers as dockerd's Go archive does (it looks ids up on the host).
 */
function hostToolArgs(): string[] {
  const args = ['--ro-bind', '/usr', '/usr'];
  for (const dir of ['bin', 'sbin', 'lib', 'lib64']) if (existsSync(`/usr/${dir}`)) args.push('--symlink', `usr/${dir}`, `/${dir}`);
  for (const file of ['/etc/passwd', '/etc/group']) if (existsSync(file)) args.push('--ro-bind', file, file);
  return args;
}

/**
 * `docker export` of a sandbox container: GNU tar over its root filesystem copy, run in a
 * bubblewrap sandbox of its own where the copy is bound read-only at {@link ROOT} beside the host's
 * /usr. Inside the runtime's user namespace (`enter`) the owners read are the container's own
 * (unshifted), and tar reads every file as the container's root may (CAP_DAC_READ_SEARCH only).
 * A running container may swap a directory for a symlink while tar walks: the sandbox holds
 * nothing of the host but /usr and the two id files, so no such swap reaches anything else.
 * Entry names are relative without `./` (`bin/`, `bin/sh`), sorted by name, and the mount points
 * /proc, /sys and /dev are kept empty, as dockerd's export has them.
 */
export async function exportRootfs(run: {
  bwrap: string;
  rootfs: string;
  signal: AbortSignal;
  enter?: (bwrap: string, args: string[], argv: string[]) => [string, string[]];
}): Promise<Readable> {
  // Top-level names (the directory read here holds only names; tar resolves everything inside
  // the sandbox), in byte order as Go's filepath.Walk gives them.
  const names = (await readdir(run.rootfs)).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const out = new PassThrough();
  if (names.length === 0) {
    out.end(EMPTY_TAR);
    return out;
  }
  const args = [
    '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-net', '--die-with-parent', '--new-session',
    ...hostToolArgs(), '--ro-bind', run.rootfs, ROOT, '--dev', '/dev',
    '--cap-drop', 'ALL', '--cap-add', 'CAP_DAC_READ_SEARCH', '--chdir', ROOT,
  ];
  const argv = [
    '/usr/bin/tar', '--create', '--file=-', '--sort=name', '--anchored',
    ...['proc', 'sys', 'dev'].map((dir) => `--exclude=${dir}/*`), '--', ...names,
  ];
  let stderr = '';
  let proc: LocalProcess | undefined;
  proc = await launchSandbox({
    bwrap: run.bwrap, args, argv, env: ['PATH=/usr/bin:/bin', 'LC_ALL=C'], openStdin: false, init: false,
    ...(run.enter ? { enter: run.enter } : {}),
    output: (stream, data) => {
      if (stream === 2) stderr = (stderr + data.toString()).slice(-4096);
      else if (!out.write(data)) {
        proc?.pause();
        out.once('drain', () => proc?.resume());
      }
    },
  });
  const running = proc;
  let done = false;
  const stop = () => {
    if (!done) running.kill('SIGKILL');
  };
  run.signal.addEventListener('abort', stop, { once: true });
  out.once('close', stop);
  void running.exited.then((code) => {
    done = true;
    run.signal.removeEventListener('abort', stop);
    // GNU tar's 1 is "a file changed as it was read" (a running container writing): the archive is whole.
    if (code === 0 || code === 1) out.end();
    else out.destroy(EngineError.system(`exporting the container's filesystem failed: ${stderr.trim() || `tar exited with ${code}`}`));
  });
  return out;
}
