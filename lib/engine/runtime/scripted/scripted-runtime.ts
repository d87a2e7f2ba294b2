import { createHash } from 'node:crypto';
import type { ContainerRuntime } from '../../../engine-api/runtime-types.js';
import { familiarImageRef } from '../../../engine-api/image-ref.js';
import { PassThrough, type Readable } from 'node:stream';
import type { LocalExecutor, LocalImage, LocalProcess } from '../local/local-container.js';
import { LocalRuntime } from '../local/local-runtime.js';
import { signalNumber } from '../../../engine-api/signal.js';
import { localLimits } from '../local/local-limits.js';

/** Signals whose default action is to do nothing, so a script never sees them. */
const IGNORED_BY_DEFAULT: ReadonlySet<string> = new Set(['SIGCHLD', 'SIGCONT', 'SIGURG', 'SIGWINCH']);

/** What a scripted container sees. */
export interface ScriptRun {
  /** Entrypoint + Cmd of the container. */
  argv: string[];
  env: string[];
  /** Writes output as the container would (stream 1 stdout, 2 stderr). */
  write(stream: 1 | 2, data: string | Buffer): void;
  /**
   * Aborted when the container gets a signal that ends a process by default (`docker kill`,
   * `docker stop`, forced removal, Ctrl-C through `docker run`); `signal.reason` is the signal's
   * name (`'SIGTERM'`) and the container exits with 128 + its number, whatever the script does.
   */
  signal: AbortSignal;
  /** What the client writes to an exec's stdin (`docker exec -i`); absent when the exec attached none. */
  stdin?: Readable;
}

/** The outcome of a scripted container; output may also be written with `run.write` before. */
export interface ScriptResult {
  stdout?: string | Buffer;
  stderr?: string | Buffer;
  /** Defaults to 0. */
  exitCode?: number;
}

/** A scripted image: called once per container start. */
export type ScriptedImage = (run: ScriptRun) => ScriptResult | void | Promise<ScriptResult | void>;

/** Options of {@link scriptedRuntime}. */
export interface ScriptedRuntimeOptions {
  /** Image reference (familiar form compared) → script. Required, at least one entry. */
  images: Record<string, ScriptedImage>;
  /** Bytes of output kept per container. Defaults to 1 MiB. */
  maxLogBytes?: number;
  /** Containers kept at once; a create beyond it is 409 until some are removed. Defaults to 1000. */
  maxContainers?: number;
  /**
   * Bytes a container's log files may hold together, its LogConfig's `max-size` × `max-file`
   * (`--log-opt max-size=1p --log-opt max-file=999999` would fill the disk); more is a 400 at
   * create naming HostConfig.LogConfig. Defaults to 1 GiB (the default rotation keeps 3 × 10 MiB).
   */
  maxLogFilesBytes?: number;
}

/**
 * An in-memory runtime for hosts' own tests: containers run a function instead of a process,
 * with the same lifecycle, logs, waits and events as the process runtime. `docker exec` calls
 * the image's script again with the exec's command (argv), environment and stdin.
 *
 * @example
 * const runtime = scriptedRuntime({ images: { 'busybox:latest': ({ argv }) => ({ stdout: `${argv.slice(1).join(' ')}\n` }) } });
 */
export function scriptedRuntime(options: ScriptedRuntimeOptions): ContainerRuntime {
  if (typeof options?.images !== 'object' || options.images === null || Object.keys(options.images).length === 0) {
    throw new TypeError('scriptedRuntime option "images" must map at least one image reference to a function');
  }
  const limits = localLimits(options, 'scriptedRuntime');
  const scripts = new Map<string, { image: LocalImage; script: ScriptedImage }>();
  const started = new Date();
  for (const [name, script] of Object.entries(options.images)) {
    if (typeof script !== 'function') throw new TypeError(`scriptedRuntime option "images['${name}']" must be a function`);
    const ref = familiarImageRef(name);
    scripts.set(ref, { image: { ref, id: `sha256:${createHash('sha256').update(ref).digest('hex')}`, cmd: ['run'], created: started }, script });
  }
  let pids = 1000;
  const executor: LocalExecutor = {
    images: {
      image: (ref) => scripts.get(ref)?.image,
      list: () => [...scripts.values()].map((s) => s.image),
    },
    // A script runs inside the server and opens no network of its own.
    networks: ['none'],
    start: async ({ argv, env, image, output }) => runScript(scripts.get(image.ref)!.script, { argv, env, output }, ++pids),
    // `docker exec` runs the container image's script again with the exec's command and environment.
    exec: {
      check: () => undefined,
      run: async ({ container, argv, env, stdin, output }) => {
        const input = stdin ? new PassThrough() : undefined;
        return { ...runScript(scripts.get(container.image.ref)!.script, { argv, env, output, ...(input ? { stdin: input } : {}) }, ++pids), ...(input ? { stdin: input } : {}) };
      },
    },
    // Every create body is taken (scripts ignore what they do not read), and nothing is kept per container.
    validate: () => undefined,
    removed: () => undefined,
    close: async () => undefined,
  };
  return new LocalRuntime('scripted', executor, limits);
}

function runScript(
  script: ScriptedImage,
  run: { argv: string[]; env: string[]; output: (stream: 1 | 2, data: Buffer) => void; stdin?: Readable },
  pid: number,
): LocalProcess {
  const abort = new AbortController();
  const killedCode = (): number => 128 + signalNumber(abort.signal.reason as NodeJS.Signals);
  const write = (stream: 1 | 2, data: string | Buffer): void => run.output(stream, Buffer.isBuffer(data) ? data : Buffer.from(data));
  const exited = (async () => {
    // A tick first, so `start` answers before the script's output and exit, as a real process would.
    await new Promise((resolve) => setImmediate(resolve));
    try {
      const result = (await script({ argv: run.argv, env: run.env, write, signal: abort.signal, ...(run.stdin ? { stdin: run.stdin } : {}) })) ?? {};
      if (abort.signal.aborted) return killedCode();
      if (result.stdout !== undefined) write(1, result.stdout);
      if (result.stderr !== undefined) write(2, result.stderr);
      return result.exitCode ?? 0;
    } catch (error) {
      if (abort.signal.aborted) return killedCode();
      write(2, `${(error as Error).message}\n`);
      return 1;
    }
  })();
  const killed = new Promise<number>((resolve) => abort.signal.addEventListener('abort', () => resolve(killedCode())));
  return {
    pid,
    exited: Promise.race([exited, killed]),
    pause: () => undefined,
    resume: () => undefined,
    kill: (sig = 'SIGTERM') => {
      if (!IGNORED_BY_DEFAULT.has(sig)) abort.abort(sig);
    },
  };
}
