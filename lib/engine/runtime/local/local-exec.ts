import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { EngineError } from '../../../engine-api/engine-error.js';
import { encodeFrame } from '../../../engine-api/stdcopy.js';
import { detachKeyBytes } from '../../../engine-api/detach-keys.js';
import type { AttachSession } from '../../../engine-api/runtime-types.js';
import type { ExecStartOptions } from '../../../engine-api/exec-operations.js';
import type { ExecSpec } from '../../../engine-api/exec-spec.js';
import type { LocalContainer, LocalExecProcess, ExecutorExec } from './local-container.js';

/** Exec instances kept at once; the oldest finished ones go first (dockerd drops them with their container). */
const MAX_EXECS = 1000;

interface LocalExec {
  id: string;
  container: LocalContainer;
  spec: ExecSpec;
  started: boolean;
  running: boolean;
  exitCode: number | null;
  pid: number;
  process?: LocalExecProcess;
}

/**
 * The exec instances of a local runtime: created against a running container, started once,
 * inspected until their container is removed. Running the command is the executor's
 * {@link ExecutorExec}; output is framed (stdcopy) unless exec start asked for a TTY, and read
 * with back-pressure (the command blocks when the client reads slowly).
 */
export class LocalExecs {
  private readonly execs = new Map<string, LocalExec>();

  constructor(
    private readonly exec: ExecutorExec,
    /** dockerd's exec events (`exec_create: <cmd>`, `exec_start: <cmd>`, `exec_die`) on the container. */
    private readonly publish: (action: string, c: LocalContainer, extra?: Record<string, string>) => void = () => undefined,
  ) {}

  create(c: LocalContainer, spec: ExecSpec): { id: string } {
    if (c.status !== 'running') throw EngineError.conflict(`Container ${c.id} is not running`);
    if (c.paused === true) throw EngineError.conflict(`Container ${c.id} is paused, unpause the container before exec`);
    this.exec.check(c);
    // Checked now (dockerd's words); the exec start's attach watches a TTY's input for them.
    if (spec.detachKeys) detachKeyBytes(spec.detachKeys);
    const id = randomBytes(32).toString('hex');
    this.execs.set(id, { id, container: c, spec, started: false, running: false, exitCode: null, pid: 0 });
    this.trim();
    this.publish(`exec_create: ${spec.cmd.join(' ')}`, c, { execID: id });
    return { id };
  }

  async start(id: string, options: ExecStartOptions): Promise<AttachSession | undefined> {
    const e = this.get(id);
    const c = e.container;
    if (e.running) throw EngineError.conflict(`Error: Exec command ${e.id} is already running`);
    if (e.started) throw EngineError.conflict(`Error: Exec command ${e.id} has already run`);
    if (c.status !== 'running') throw EngineError.conflict(`Container ${c.id} is not running`);
    if (c.paused === true) throw EngineError.conflict(`Container ${c.id} is paused, unpause the container before exec`);
    const tty = e.spec.tty;
    // dockerd frames an exec's output by the Tty of exec *start*, not of create
    // (postContainerExecStart wraps stdout/stderr in stdcopy writers unless start's Tty is set):
    // docker-py creates with tty=True and starts with Tty false, and reads frames.
    const framed = !options.tty;
    const attached = !options.detach;
    const out = attached ? new PassThrough() : undefined;
    const wants = (stream: 1 | 2): boolean => (stream === 1 ? e.spec.attachStdout !== false : e.spec.attachStderr !== false);
    e.started = true;
    e.running = true;
    let proc: LocalExecProcess;
    try {
      proc = await this.exec.run({
        container: c,
        argv: [...e.spec.cmd],
        env: execEnv(c.env, e.spec.env, tty),
        user: e.spec.user,
        workingDir: e.spec.workingDir,
        tty,
        stdin: attached && e.spec.attachStdin,
        privileged: e.spec.privileged,
        ...(consoleSize(e.spec, options) ? { consoleSize: consoleSize(e.spec, options)! } : {}),
        output: (stream, data) => {
          if (!out || out.destroyed || !wants(stream)) return;
          if (!out.write(framed ? encodeFrame(stream, data) : data)) {
            e.process?.pause();
            out.once('drain', () => e.process?.resume());
          }
        },
      });
    } catch (error) {
      e.running = false;
      e.exitCode = 126;
      throw error instanceof EngineError ? error : EngineError.system(`exec failed: ${(error as Error).message}`, error);
    }
    e.process = proc;
    e.pid = proc.pid;
    this.publish(`exec_start: ${e.spec.cmd.join(' ')}`, c, { execID: e.id });
    // A client gone away must not leave the command blocked on a full pipe.
    out?.on('close', () => proc.resume());
    // The container's end is the exec's end too (its namespaces, or its process group, are gone).
    const onContainerExit = (): void => proc.kill('SIGKILL');
    c.exitWaiters.add(onContainerExit);
    void proc.exited.then((code) => {
      c.exitWaiters.delete(onContainerExit);
      e.running = false;
      e.exitCode = code;
      e.process = undefined;
      this.publish('exec_die', c, { execID: e.id, exitCode: String(code) });
      out?.end();
    });
    if (!out) return undefined;
    return {
      stream: out, multiplexed: framed, ...(proc.stdin && attached && e.spec.attachStdin ? { stdin: proc.stdin } : {}),
      ...(e.spec.detachKeys ? { detachKeys: e.spec.detachKeys } : {}),
    };
  }

  inspect(id: string): Record<string, unknown> {
    const e = this.get(id);
    const [entrypoint = '', ...args] = e.spec.cmd;
    return {
      ID: e.id,
      Running: e.running,
      ExitCode: e.exitCode,
      ProcessConfig: { tty: e.spec.tty, entrypoint, arguments: args, privileged: e.spec.privileged, user: e.spec.user },
      OpenStdin: e.spec.attachStdin,
      OpenStderr: e.spec.attachStderr === true,
      OpenStdout: e.spec.attachStdout === true,
      CanRemove: false,
      ContainerID: e.container.id,
      // dockerd keeps the key bytes ([]byte: base64 in JSON), empty when the exec named none.
      DetachKeys: e.spec.detachKeys ? detachKeyBytes(e.spec.detachKeys).toString('base64') : '',
      Pid: e.running ? e.pid : 0,
    };
  }

  resize(id: string, height: number, width: number): void {
    const e = this.get(id);
    if (e.running) e.process?.resize?.(height, width);
  }

  /** Forgets the execs of a removed container. */
  forget(containerId: string): void {
    for (const [id, e] of this.execs) if (e.container.id === containerId) this.execs.delete(id);
  }

  private get(id: string): LocalExec {
    const e = this.execs.get(id);
    if (!e || !this.alive(e.container)) throw EngineError.notFound(`No such exec instance: ${id}`);
    return e;
  }

  private alive(c: LocalContainer): boolean {
    return c.status !== 'removing';
  }

  private trim(): void {
    if (this.execs.size <= MAX_EXECS) return;
    for (const [id, e] of this.execs) {
      if (this.execs.size <= MAX_EXECS) break;
      if (!e.running && (e.started || !this.alive(e.container))) this.execs.delete(id);
    }
  }
}

function consoleSize(spec: ExecSpec, options: ExecStartOptions): [number, number] | undefined {
  return options.consoleSize ?? spec.consoleSize;
}

/**
 * dockerd's exec environment (CreateDaemonEnvironment, then the exec's Env): `TERM=xterm` when the
 * exec has a TTY, the container's environment over it, then the exec's own `Env`; a later entry
 * replaces an earlier one of the same name.
 */
function execEnv(container: readonly string[], own: readonly string[], tty: boolean): string[] {
  const out = new Map<string, string>();
  const name = (e: string): string => (e.includes('=') ? e.slice(0, e.indexOf('=')) : e);
  for (const e of [...(tty ? ['TERM=xterm'] : []), ...container, ...own]) {
    out.delete(name(e));
    out.set(name(e), e);
  }
  return [...out.values()];
}
