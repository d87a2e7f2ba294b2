import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';

/** What a command run by {@link runOffLoop} ended with. */
export interface CommandResult {
  /** Exit status; null when a signal ended it. */
  code: number | null;
  signal: string | null;
  /** Its standard output (at most {@link OUTPUT_LIMIT} bytes kept), as UTF-8. */
  stdout: string;
  /** Its standard error (at most {@link OUTPUT_LIMIT} bytes kept), as UTF-8. */
  stderr: string;
}

/** What {@link runOffLoop} runs a command with. */
export interface CommandOptions {
  /** Written to its standard input, which is then closed (else it reads an empty one). */
  input?: string;
  /** Its environment (default: the server's). */
  env?: NodeJS.ProcessEnv;
}

/** Bytes of each output stream kept: these commands say little, a runaway one is cut. */
export const OUTPUT_LIMIT = 64 * 1024;

/**
 * The helper's code (plain JavaScript, run with `node -e`: it needs no file next to this one, so
 * it runs the same from dist/ and under a TypeScript test runner). Each message is one command;
 * the answer carries its id. It exits when the server's end of the channel closes (the server
 * exited or died): the pipes it holds close with it, and a kept child's exit descriptor with them.
 */
const HELPER = `
const parentPort = { on: (event, f) => process.on(event, f), postMessage: (m) => process.send(m) };
process.on('disconnect', () => process.exit(0));
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const LIMIT = ${OUTPUT_LIMIT};
const kept = new Map();
parentPort.on('message', (m) => {
  if (m.type === 'start') return start(m);
  if (m.type === 'launch') return launch(m);
  if (m.type === 'close-fd') return kept.get(m.id)?.stdio[m.fd]?.destroy();
  if (m.type === 'kill') { try { kept.get(m.id)?.kill(m.signal); } catch {} return; }
  run(m);
});
function start({ id, file, args, readyFd, extraFds }) {
  let child;
  try {
    child = spawn(file, args, { stdio: ['ignore', 'ignore', 'pipe', ...Array(extraFds).fill('pipe')] });
  } catch (error) {
    return parentPort.postMessage({ id, event: 'error', error: { message: error.message, code: error.code } });
  }
  kept.set(id, child);
  let stderr = '';
  child.stderr.on('data', (chunk) => { if (stderr.length < LIMIT) stderr += chunk.toString('utf8').slice(0, LIMIT - stderr.length); });
  child.stdio[readyFd]?.once('data', () => { parentPort.postMessage({ id, event: 'ready' }); child.stdio[readyFd].destroy(); });
  for (const fd of child.stdio.slice(3)) fd?.on('error', () => undefined);
  child.once('error', (error) => parentPort.postMessage({ id, event: 'error', error: { message: error.message, code: error.code } }));
  child.once('exit', (code, signal) => { kept.delete(id); parentPort.postMessage({ id, event: 'exit', code, signal, stderr }); });
}
function launch(m) {
  if (!m.argsFile) return launchOpen(m, []);
  // The file is opened here, unlinked at once, and given to the child as a descriptor.
  fs.open(m.argsFile.path, 'r', (error, fd) => {
    fs.unlink(m.argsFile.path, () => undefined);
    if (error) return parentPort.postMessage({ id: m.id, event: 'error', error: { message: error.message, code: error.code } });
    launchOpen(m, [...Array(m.argsFile.fd - 3).fill('ignore'), fd]);
    fs.close(fd, () => undefined);
  });
}
function launchOpen({ id, file, args, env, stdin }, extra) {
  let child;
  try {
    child = spawn(file, args, { env, stdio: [stdin ? 'pipe' : 'ignore', 'pipe', 'pipe', ...extra] });
  } catch (error) {
    return parentPort.postMessage({ id, event: 'error', error: { message: error.message, code: error.code } });
  }
  child.once('error', (error) => { kept.delete(id); parentPort.postMessage({ id, event: 'error', error: { message: error.message, code: error.code } }); });
  if (child.pid === undefined) return;
  kept.set(id, child);
  // The helper never reads them: every byte is the server's, from the first. Each goes to the
  // server in a message of its own (one descriptor per message), and closes here once it is there.
  child.stdout._handle.readStop();
  child.stderr._handle.readStop();
  parentPort.postMessage({ id, event: 'spawned', pid: child.pid });
  for (const [fd, stream] of [[0, child.stdin], [1, child.stdout], [2, child.stderr]]) if (stream) process.send({ id, event: 'stdio', fd }, stream);
  child.once('exit', (code, signal) => { kept.delete(id); parentPort.postMessage({ id, event: 'exit', code, signal, stderr: '' }); });
}
function run({ id, file, args, input, env }) {
  let child;
  try {
    child = spawn(file, args, { stdio: ['pipe', 'pipe', 'pipe'], ...(env ? { env } : {}) });
  } catch (error) {
    return parentPort.postMessage({ id, error: { message: error.message, code: error.code } });
  }
  const out = { stdout: '', stderr: '' };
  for (const name of ['stdout', 'stderr']) {
    child[name].on('data', (chunk) => { if (out[name].length < LIMIT) out[name] += chunk.toString('utf8').slice(0, LIMIT - out[name].length); });
  }
  let failed;
  child.once('error', (error) => { failed = { message: error.message, code: error.code }; });
  child.once('close', (code, signal) => parentPort.postMessage(failed ? { id, error: failed } : { id, code, signal, ...out }));
  child.stdin.on('error', () => undefined);
  child.stdin.end(input ?? '');
}
`;

interface Pending {
  resolve(result: CommandResult): void;
  reject(error: Error): void;
}

/** A message from a helper: a command's end, or an event of a kept child. */
type Answer = { id: number; error?: { message: string; code?: string }; event?: 'ready' | 'exit' | 'error' | 'spawned' | 'stdio'; pid?: number; fd?: 0 | 1 | 2 } & CommandResult;

/** A kept child's side in the server: {@link OffLoopChild} or {@link OffLoopProcess}. */
interface KeptChild {
  onEvent(m: Answer, handle?: Socket): void;
}

/**
 * Helper processes the commands are spread over. A spawn is done by a small Node process of its
 * own, not by the server, nor by a worker thread of the server: a fork copies the page tables of
 * the whole process that calls it, and until the child has exec'd every page the server writes is
 * copied once more. 16 concurrent `docker run --rm` cost the server 0.55-0.63 s of CPU with the
 * spawns on its event loop, 0.9-1.1 s with them in worker threads, 0.34-0.41 s with helpers. Two,
 * because one would be the next serializer (a spawn holds its caller until the child has
 * exec'd; 16 concurrent starts make about 80 spawns). Each is a Node process (about 40 MiB), started at first use.
 */
export const COMMAND_HELPERS = 2;

/** One helper process, what it runs, and what waits on it. */
class CommandHelper {
  readonly pending = new Map<number, Pending>();
  /** Kept children ({@link OffLoopChild}) by id, until they exit. */
  readonly children = new Map<number, KeptChild>();
  readonly helper: ChildProcess;
  gone = false;

  constructor() {
    // Without NODE_OPTIONS: the server's (a profiler, a loader) are not the helper's.
    const env = { ...process.env };
    delete env.NODE_OPTIONS;
    const h = spawn(process.execPath, ['-e', HELPER], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'], env });
    this.helper = h;
    h.on('message', (m: Answer, handle?: Socket) => {
      if (m.event) {
        this.children.get(m.id)?.onEvent(m, handle);
        if (m.event === 'exit' || m.event === 'error') this.children.delete(m.id);
        return this.refWhileBusy();
      }
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      this.refWhileBusy();
      if (m.error) p.reject(Object.assign(new Error(m.error.message), m.error.code ? { code: m.error.code } : {}));
      else p.resolve({ code: m.code, signal: m.signal, stdout: m.stdout, stderr: m.stderr });
    });
    const lost = (error: Error): void => {
      if (this.gone) return;
      this.gone = true;
      for (const p of this.pending.values()) p.reject(error);
      this.pending.clear();
      for (const c of this.children.values()) c.onEvent({ id: -1, event: 'exit', code: null, signal: 'SIGKILL', stdout: '', stderr: error.message });
      this.children.clear();
    };
    h.on('error', lost);
    h.on('exit', (code, signal) => lost(new Error(`the command helper exited (${String(code ?? signal)})`)));
    this.refWhileBusy();
  }

  get load(): number {
    return this.pending.size + this.children.size;
  }

  /** While anything waits on it, it keeps the server alive; idle, it does not. */
  refWhileBusy(): void {
    const channel = this.helper.channel as { ref?: () => void; unref?: () => void } | null | undefined;
    if (this.load === 0) {
      this.helper.unref();
      channel?.unref?.();
    } else {
      this.helper.ref();
      channel?.ref?.();
    }
  }

  post(message: unknown): void {
    this.refWhileBusy();
    this.helper.send(message as object);
  }
}

const threads: CommandHelper[] = [];
let nextId = 0;

/** The least busy helper, a new one while fewer than {@link COMMAND_HELPERS} run and all are busy. */
function aThread(): CommandHelper {
  for (let i = threads.length - 1; i >= 0; i--) if (threads[i]!.gone) threads.splice(i, 1);
  const idle = threads.find((t) => t.pending.size === 0);
  if (idle) return idle;
  if (threads.length < COMMAND_HELPERS) {
    const t = new CommandHelper();
    threads.push(t);
    return t;
  }
  return threads.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
}

/**
 * Runs a command to its end, spawned by a helper process ({@link COMMAND_HELPERS}), never from
 * the event loop: a spawn holds the thread that calls it for the fork (its cost grows with the
 * server's memory) and until the child has exec'd, which on a busy machine is a wait for a CPU.
 * From the event loop that was 10-20 ms per command, every request waiting; 16 concurrent
 * `docker run` made about 80 of them.
 * For commands that only need their exit status and output (mkfifo, ip, cp); a helper kept
 * running is an {@link OffLoopChild}, and a child whose pipes the server reads and writes (the
 * container's launcher) is still spawned by the caller.
 * Rejects only when the command cannot be run (the error has spawn's `code`, e.g. ENOENT).
 *
 * @example
 * const { code, stderr } = await runOffLoop('mkfifo', ['-m', '0600', path]);
 */
export function runOffLoop(file: string, args: readonly string[], options: CommandOptions = {}): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const id = nextId++;
    const thread = aThread();
    thread.pending.set(id, { resolve, reject });
    thread.post({ id, file, args: [...args], input: options.input, env: options.env });
  });
}

/** How a kept child ended: its status and what it wrote on stderr (at most {@link OUTPUT_LIMIT} bytes). */
export interface ChildExit {
  code: number | null;
  signal: string | null;
  stderr: string;
}

/**
 * A long-lived child spawned by a helper process (see {@link runOffLoop} for why), for a process
 * the server keeps running beside a container (slirp4netns): its stdin and stdout are /dev/null,
 * its stderr is kept for the error message, and descriptors 3 and up are pipes the helper holds;
 * the helper exits when the server does (even by SIGKILL: its channel closes), and the pipes
 * close with it. One of them may be a ready descriptor: the first byte written on it resolves
 * {@link ready}.
 */
export class OffLoopChild {
  /** Resolves when the child has exited (never rejects). */
  readonly exited: Promise<ChildExit>;
  /** Resolves on the first byte on the ready descriptor; rejects when the child cannot be run or exits first. */
  readonly ready: Promise<void>;
  /** Set once it has exited. */
  exit: ChildExit | undefined;
  private settleReady!: (error?: Error) => void;
  private settleExit!: (exit: ChildExit) => void;

  private constructor(private readonly id: number, private readonly thread: CommandHelper) {
    this.exited = new Promise((resolve) => (this.settleExit = resolve));
    this.ready = new Promise((resolve, reject) => (this.settleReady = (error) => (error ? reject(error) : resolve())));
    this.ready.catch(() => undefined);
  }

  /** Spawns `file` with pipes on descriptors 3 to 2 + `extraFds`; `readyFd` (one of them) reports readiness. */
  static start(file: string, args: readonly string[], options: { extraFds: number; readyFd: number }): OffLoopChild {
    const id = nextId++;
    const thread = aThread();
    const child = new OffLoopChild(id, thread);
    thread.children.set(id, child);
    thread.post({ type: 'start', id, file, args: [...args], readyFd: options.readyFd, extraFds: options.extraFds });
    return child;
  }

  /** Closes the helper's end of descriptor `fd` (an exit descriptor tells the child to end). */
  closeFd(fd: number): void {
    if (!this.thread.gone) this.thread.helper.send({ type: 'close-fd', id: this.id, fd });
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    if (!this.thread.gone) this.thread.helper.send({ type: 'kill', id: this.id, signal });
  }

  /** @internal an event from the helper. */
  onEvent(m: Answer): void {
    if (m.event === 'ready') return this.settleReady();
    if (m.event === 'error') {
      if (this.exit) return;
      const error = Object.assign(new Error(m.error?.message ?? 'spawn failed'), m.error?.code ? { code: m.error.code } : {});
      this.settleReady(error);
      this.exit = { code: null, signal: null, stderr: error.message };
      this.settleExit(this.exit);
      return;
    }
    if (this.exit) return;
    this.exit = { code: m.code, signal: m.signal, stderr: m.stderr };
    this.settleReady(new Error('exited before it was ready'));
    this.settleExit(this.exit);
  }
}

/** What {@link launchOffLoop} starts a child with. */
export interface LaunchOptions {
  /** Its whole environment. */
  env: NodeJS.ProcessEnv;
  /** A pipe on its stdin ({@link OffLoopProcess.stdin}); else /dev/null. */
  stdin: boolean;
  /**
   * A file of the server's the helper opens read-only as the child's descriptor `fd` (3 or more;
   * those below it but above 2 are closed) and unlinks as soon as it is open: from then on only
   * that descriptor gives it. It cannot be opened: the child is not started (`error`).
   */
  argsFile?: { fd: number; path: string };
}

/**
 * A child spawned by a helper process (see {@link runOffLoop} for why) whose pipes the server
 * keeps: its stdin (when asked), stdout and stderr are passed to the server, which alone reads
 * and writes them. It looks like a ChildProcess to a reader of its pipes and events: `spawn`
 * once it runs (pid set, pipes here), `error` when it cannot run, `exit` and then `close` (once
 * its stdout and stderr are drained) with its status. For the container's launcher
 * (sandbox-process.ts): its fork was the last one a start made from the event loop. Like a kept
 * {@link OffLoopChild}, it ends with the server: bwrap dies with its parent, the helper.
 */
export class OffLoopProcess extends EventEmitter implements KeptChild {
  pid: number | undefined;
  stdin: Socket | null = null;
  stdout: Socket | null = null;
  stderr: Socket | null = null;
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;
  private exited = false;
  private readonly pending = new Set<number>();
  private openPipes = 2;

  /** @internal use {@link launchOffLoop}. */
  constructor(private readonly id: number, private readonly thread: CommandHelper, stdin: boolean) {
    super();
    for (const fd of [...(stdin ? [0] : []), 1, 2]) this.pending.add(fd);
  }

  /** Signals it (through its helper: the pid is never reused while the helper has not reaped it); false once it has exited. */
  kill(signal: NodeJS.Signals = 'SIGTERM'): boolean {
    if (this.exited || this.thread.gone) return false;
    this.thread.helper.send({ type: 'kill', id: this.id, signal });
    return true;
  }

  /** @internal an event from the helper. */
  onEvent(m: Answer, handle?: Socket): void {
    if (m.event === 'spawned') {
      this.pid = m.pid;
      return;
    }
    if (m.event === 'stdio' && handle) {
      if (m.fd === 0) this.stdin = handle;
      else if (m.fd === 1) this.stdout = handle;
      else this.stderr = handle;
      if (m.fd !== 0) handle.once('close', () => this.pipeClosed());
      this.pending.delete(m.fd ?? 0);
      if (this.pending.size === 0) this.emit('spawn');
      return;
    }
    if (m.event === 'error') {
      if (this.exited) return;
      this.exited = true;
      this.emit('error', Object.assign(new Error(m.error?.message ?? 'spawn failed'), m.error?.code ? { code: m.error.code } : {}));
      return;
    }
    if (this.exited) return;
    this.exited = true;
    this.exitCode = m.code;
    this.signalCode = m.signal as NodeJS.Signals | null;
    this.emit('exit', this.exitCode, this.signalCode);
    if (this.pending.size > 0) {
      // The helper was lost before every pipe got here: nothing more will come on them.
      for (const s of [this.stdout, this.stderr]) s?.destroy();
      this.openPipes = 0;
    }
    this.maybeClose();
  }

  private pipeClosed(): void {
    this.openPipes--;
    this.maybeClose();
  }

  private maybeClose(): void {
    if (this.exited && this.openPipes <= 0) {
      this.openPipes = Number.NaN;
      this.emit('close', this.exitCode, this.signalCode);
    }
  }
}

/**
 * Starts `file` with `args` from a helper process, its pipes the server's ({@link OffLoopProcess}).
 * Returns at once; `spawn` or `error` follows.
 */
export function launchOffLoop(file: string, args: readonly string[], options: LaunchOptions): OffLoopProcess {
  const id = nextId++;
  const thread = aThread();
  const child = new OffLoopProcess(id, thread, options.stdin);
  thread.children.set(id, child);
  thread.post({ type: 'launch', id, file, args: [...args], env: options.env, stdin: options.stdin, argsFile: options.argsFile });
  return child;
}
