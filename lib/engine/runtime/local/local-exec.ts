import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { EngineError } from '../../../engine-api/engine-error.js';
import { encodeFrame } from '../../../engine-api/stdcopy.js';
import { detachKeyBytes } from '../../../engine-api/detach-keys.js';
import type { AttachSession } from '../../../engine-api/runtime-types.js';
import type { ExecCreateBody, ExecStartOptions } from '../../../engine-api/exec-operations.js';
import type { LocalContainer, LocalExecProcess, LocalExecutor } from './local-container.js';

/** Exec instances kept at once; the oldest finished ones go first (dockerd drops them with their container). */
const MAX_EXECS = 1000;

interface LocalExec {
  id: string;
  container: LocalContainer;
  body: ExecCreateBody;
  started: boolean;
  running: boolean;
  exitCode: number | null;
  pid: number;
  process?: LocalExecProcess;
}

/**
 * The exec instances of a local runtime: created against a running container, started once,
 * inspected until their container is removed. Running the command is the executor's
 * {@link LocalExecutor.exec}; output is framed (stdcopy) unless exec start asked for a TTY, and read
 * with back-pressure (the command blocks when the client reads slowly).
 */
export class LocalExecs {
  private readonly execs = new Map<string, LocalExec>();

  constructor(
    private readonly runtimeName: string,
    private readonly executor: LocalExecutor,
    /** dockerd's exec events (`exec_create: <cmd>`, `exec_start: <cmd>`, `exec_die`) on the container. */
    private readonly publish: (action: string, c: LocalContainer, extra?: Record<string, string>) => void = () => undefined,
  ) {}

  create(c: LocalContainer, body: ExecCreateBody): { id: string } {
    if (!this.executor.exec) throw EngineError.unsupported('exec', this.runtimeName);
    if (c.status !== 'running') throw EngineError.conflict(`Container ${c.id} is not running`);
    if (c.paused === true) throw EngineError.conflict(`Container ${c.id} is paused, unpause the container before exec`);
    this.executor.checkExec?.(c);
    // Checked now (dockerd's words); the exec start's attach watches a TTY's input for them.
    if (body.DetachKeys) detachKeyBytes(body.DetachKeys);
    const id = randomBytes(32).toString('hex');
    this.execs.set(id, { id, container: c, body, started: false, running: false, exitCode: null, pid: 0 });
    this.trim();
    this.publish(`exec_create: ${body.Cmd.join(' ')}`, c, { execID: id });
    return { id };
  }

  async start(id: string, options: ExecStartOptions): Promise<AttachSession | undefined> {
    const e = this.get(id);
    const c = e.container;
    if (e.running) throw EngineError.conflict(`Error: Exec command ${e.id} is already running`);
    if (e.started) throw EngineError.conflict(`Error: Exec command ${e.id} has already run`);
    if (c.status !== 'running') throw EngineError.conflict(`Container ${c.id} is not running`);
    if (c.paused === true) throw EngineError.conflict(`Container ${c.id} is paused, unpause the container before exec`);
    const tty = e.body.Tty === true;
    // dockerd frames an exec's output by the Tty of exec *start*, not of create
    // (postContainerExecStart wraps stdout/stderr in stdcopy writers unless start's Tty is set):
    // docker-py creates with tty=True and starts with Tty false, and reads frames.
    const framed = !options.tty;
    const attached = !options.detach;
    const out = attached ? new PassThrough() : undefined;
    const wants = (stream: 1 | 2): boolean => (stream === 1 ? e.body.AttachStdout !== false : e.body.AttachStderr !== false);
    e.started = true;
    e.running = true;
    let proc: LocalExecProcess;
    try {
      proc = await this.executor.exec!({
        container: c,
        argv: [...e.body.Cmd],
        env: execEnv(c.env, e.body.Env ?? [], tty),
        user: e.body.User ?? '',
        workingDir: e.body.WorkingDir ?? '',
        tty,
        stdin: attached && e.body.AttachStdin === true,
        privileged: e.body.Privileged === true,
        ...(consoleSize(e.body, options) ? { consoleSize: consoleSize(e.body, options)! } : {}),
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
    this.publish(`exec_start: ${e.body.Cmd.join(' ')}`, c, { execID: e.id });
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
      stream: out, multiplexed: framed, ...(proc.stdin && attached && e.body.AttachStdin === true ? { stdin: proc.stdin } : {}),
      ...(e.body.DetachKeys ? { detachKeys: e.body.DetachKeys } : {}),
    };
  }

  inspect(id: string): Record<string, unknown> {
    const e = this.get(id);
    const [entrypoint = '', ...args] = e.body.Cmd;
    return {
      ID: e.id,
      Running: e.running,
      ExitCode: e.exitCode,
      ProcessConfig: { tty: e.body.Tty === true, entrypoint, arguments: args, privileged: e.body.Privileged === true, user: e.body.User ?? '' },
      OpenStdin: e.body.AttachStdin === true,
      OpenStderr: e.body.AttachStderr === true,
      OpenStdout: e.body.AttachStdout === true,
      CanRemove: false,
      ContainerID: e.container.id,
      // dockerd keeps the key bytes ([]byte: base64 in JSON), empty when the exec named none.
      DetachKeys: e.body.DetachKeys ? detachKeyBytes(e.body.DetachKeys).toString('base64') : '',
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

function consoleSize(body: ExecCreateBody, options: ExecStartOptions): [number, number] | undefined {
  return options.consoleSize ?? (Array.isArray(body.ConsoleSize) ? body.ConsoleSize : undefined);
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
