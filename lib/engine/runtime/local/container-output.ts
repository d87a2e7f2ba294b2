import type { AttachOptions, AttachSession, LogsOptions, OutputStream } from '../../../engine-api/runtime-types.js';
import { EngineError } from '../../../engine-api/engine-error.js';
import type { LocalContainer } from './local-container.js';
import { LogReader } from './log-reader.js';
import { OutputLog } from './output-log.js';
import { LogFiles } from './log-files.js';
import type { LogSettings } from './log-config.js';

/**
 * A container's output: appended to its log files as it comes when the runtime keeps state
 * (json-file and its alias local) in `logDir`, in memory otherwise; with `none`, only to whoever
 * is attached.
 */
export function newOutputLog(logging: LogSettings, capacity: number, logDir: string | undefined): OutputLog {
  if (logging.driver === 'none') return new OutputLog({ capacity, keep: false });
  if (logDir === undefined || !logging.rotation) return new OutputLog({ capacity });
  return new OutputLog({ capacity, files: LogFiles.open(logDir, logging.rotation) });
}

/** `docker logs`: the container's kept output, followed to the end of its run with `follow`. */
export function logsOf(c: LocalContainer, options: LogsOptions): OutputStream {
  // dockerd's words and status for a driver that cannot be read back (daemon/logs.go).
  if (c.logging?.driver === 'none') throw EngineError.notImplemented('configured logging driver does not support reading');
  const log = c.log;
  const stream = new LogReader(log, {
    from: log.start,
    ...(options.tail !== undefined ? { tail: options.tail } : {}),
    ...(options.follow ? { untilRunsEnded: runToFollow(c) } : { stopAt: log.end }),
    multiplexed: !c.tty,
    lineFrames: true,
    stdout: options.stdout,
    stderr: options.stderr,
    timestamps: options.timestamps,
    since: options.since,
    until: options.until,
  });
  return { stream, multiplexed: !c.tty };
}

/** `docker attach`: the output from now (or all of it with `logs`), and its stdin when asked. */
export function attachTo(c: LocalContainer, options: AttachOptions): AttachSession {
  const log = c.log;
  const stream = new LogReader(log, {
    from: options.logs ? log.start : log.end,
    ...(options.stream ? { untilRunsEnded: runToFollow(c) } : { stopAt: log.end }),
    multiplexed: !c.tty,
    stdout: options.stdout,
    stderr: options.stderr,
    timestamps: false,
  });
  if (options.stream) {
    c.attachedStreams = (c.attachedStreams ?? 0) + 1;
    stream.once('close', () => {
      c.attachedStreams = (c.attachedStreams ?? 1) - 1;
      c.onDetach?.();
    });
  }
  // dockerd closes the container's stdin at the client's end only for StdinOnce without a TTY.
  const keepStdinOpen = c.tty || !c.spec.stdinOnce;
  return { stream, multiplexed: !c.tty, ...(options.stdin && c.stdin ? { stdin: c.stdin, keepStdinOpen } : {}) };
}

/** A follower of a running container ends with this run; of a created one, with its first run. */
function runToFollow(c: LocalContainer): number {
  if (c.status === 'running') return c.log.runsStarted;
  if (c.status === 'created') return c.log.runsStarted + 1;
  return c.log.runsEnded;
}
