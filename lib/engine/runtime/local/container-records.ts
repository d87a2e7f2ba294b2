import { containerSpecOf } from '../../../engine-api/container-spec.js';
import { existsSync, mkdirSync, readdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../../../fs/atomic-file.js';
import type { ContainerCreateBody } from '../../../engine-api/runtime-types.js';
import type { LocalContainer, LocalImage, LocalStatus } from './local-container.js';
import { PassThrough } from 'node:stream';
import type { HealthState } from './health-types.js';
import type { MountPoint } from './container-mounts.js';
import type { OutputLog } from './output-log.js';
import { MAX_PAYLOAD, recordHead, recordTrailer } from './log-record.js';

/**
 * dockerd's exit code for a container found running when the daemon comes back without
 * live-restore and its process gone (daemon/daemon.go restore: the task is gone, the container
 * is marked stopped with 255; `docker ps -a` shows `Exited (255)` after a daemon or host crash).
 */
export const LOST_EXIT_CODE = 255;

/** What is kept of one container in `<dir>/<id>/container.json`. */
export interface ContainerRecord {
  id: string;
  name: string;
  created: string;
  image: Omit<LocalImage, 'created'> & { created?: string };
  body: ContainerCreateBody;
  argv: string[];
  env: string[];
  tty: boolean;
  openStdin: boolean;
  autoRemove: boolean;
  labels: Record<string, string>;
  status: LocalStatus;
  exitCode: number;
  oomKilled?: boolean;
  error: string;
  startedAt?: string;
  finishedAt?: string;
  restartCount?: number;
  manuallyStopped?: boolean;
  health?: HealthState;
  mounts?: MountPoint[];
}

/** A container read back at start (its output is in its log files, {@link ContainerRecords.logDir}). */
export interface RestoredContainer {
  record: ContainerRecord;
}

/** One piece of output in the format of `output.log`, which servers before the log files wrote at a container's exit. */
export interface LegacyChunk {
  stream: 1 | 2;
  time: number;
  data: Buffer;
}

/** Frame header of the legacy `output.log`: stream (1 byte), time in ms (float64), length (uint32), all big-endian. */
const HEADER = 13;

/**
 * Container records on disk, so they survive a restart: `<dir>/<id>/container.json`, replaced
 * atomically (temporary file, fsync, rename); writes for one container are queued so an older
 * state never lands after a newer one, and nothing is written once it is removed. The
 * container's output is appended as it comes to its log files in `<dir>/<id>/logs/` (log-files.ts).
 */
export class ContainerRecords {
  private readonly queues = new Map<string, Promise<void>>();
  private readonly removed = new Set<string>();

  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
  }

  /** Every record in the directory (a broken one is skipped: a crash mid-create leaves no record). */
  loadAll(): RestoredContainer[] {
    const out: RestoredContainer[] = [];
    for (const id of readdirSync(this.dir)) {
      let record: ContainerRecord;
      try {
        record = JSON.parse(readFileSync(join(this.dir, id, 'container.json'), 'utf8')) as ContainerRecord;
      } catch {
        continue;
      }
      if (record.id !== id || record.status === 'removing') continue;
      this.upgradeLegacyLog(id);
      out.push({ record });
    }
    return out;
  }

  /** Where the container's log files are. */
  logDir(id: string): string {
    return join(this.dir, id, 'logs');
  }

  /** Output an earlier version kept in `output.log` becomes the first log file. */
  private upgradeLegacyLog(id: string): void {
    const legacy = join(this.dir, id, 'output.log');
    if (!existsSync(legacy)) return;
    try {
      if (!existsSync(this.logDir(id))) {
        const parts: Buffer[] = [];
        for (const c of decodeLog(readFileSync(legacy))) {
          for (let at = 0; at < c.data.length; at += MAX_PAYLOAD) {
            const data = c.data.subarray(at, at + MAX_PAYLOAD);
            parts.push(recordHead(c.stream, c.time, data.length), data, recordTrailer(data.length));
          }
        }
        mkdirSync(this.logDir(id), { recursive: true, mode: 0o700 });
        writeFileSync(join(this.logDir(id), '000001.log'), Buffer.concat(parts), { mode: 0o600 });
      }
      unlinkSync(legacy);
    } catch {
      // Unreadable: the container comes back with the logs it has.
    }
  }

  save(c: LocalContainer): Promise<void> {
    const record = recordOf(c);
    return this.enqueue(c.id, async () => {
      await writeFileAtomic(join(this.dir, c.id, 'container.json'), JSON.stringify(record));
    });
  }

  /** Deletes the container's directory after its pending writes; nothing is written for it afterwards. */
  remove(id: string): Promise<void> {
    const done = this.enqueue(id, () => rm(join(this.dir, id), { recursive: true, force: true, maxRetries: 5 }));
    this.removed.add(id);
    return done;
  }

  /** Resolves once every queued write has landed. */
  async flush(): Promise<void> {
    await Promise.all([...this.queues.values()]);
  }

  private enqueue(id: string, write: () => Promise<void>): Promise<void> {
    if (this.removed.has(id)) return Promise.resolve();
    const previous = this.queues.get(id) ?? Promise.resolve();
    const next = previous.then(async () => {
      mkdirSync(join(this.dir, id), { recursive: true });
      await write();
    }).catch(() => undefined);
    this.queues.set(id, next);
    void next.then(() => {
      if (this.queues.get(id) === next) this.queues.delete(id);
    });
    return next;
  }
}

export function recordOf(c: LocalContainer): ContainerRecord {
  const { created, ...image } = c.image;
  return {
    id: c.id,
    name: c.name,
    created: c.created.toISOString(),
    image: { ...image, ...(created ? { created: created.toISOString() } : {}) },
    body: c.body,
    argv: c.argv,
    env: c.env,
    tty: c.tty,
    openStdin: c.openStdin,
    autoRemove: c.autoRemove,
    labels: c.labels,
    status: c.status,
    exitCode: c.exitCode,
    ...(c.oomKilled ? { oomKilled: true } : {}),
    error: c.error,
    ...(c.startedAt ? { startedAt: c.startedAt.toISOString() } : {}),
    ...(c.finishedAt ? { finishedAt: c.finishedAt.toISOString() } : {}),
    ...(c.restartCount ? { restartCount: c.restartCount } : {}),
    ...(c.manuallyStopped ? { manuallyStopped: true } : {}),
    ...(c.health ? { health: c.health } : {}),
    ...(c.mounts ? { mounts: c.mounts } : {}),
  };
}

/**
 * The state a record comes back in: created and exited containers as they were; one that was
 * running (its server died with it, and --die-with-parent took its processes) is exited with
 * {@link LOST_EXIT_CODE}, as dockerd reports it after a crash without live-restore.
 */
export function restoredState(record: ContainerRecord, now: Date): Pick<ContainerRecord, 'status' | 'exitCode' | 'error' | 'finishedAt'> {
  if (record.status === 'running') {
    return { status: 'exited', exitCode: LOST_EXIT_CODE, error: 'the engine stopped while the container was running', finishedAt: now.toISOString() };
  }
  return { status: record.status, exitCode: record.exitCode, error: record.error, ...(record.finishedAt ? { finishedAt: record.finishedAt } : {}) };
}

/** The in-memory container for a record read back, in its {@link restoredState}, with its log (opened on its files). */
export function restoredContainer({ record }: RestoredContainer, output: OutputLog, now = new Date()): LocalContainer {
  const state = restoredState(record, now);
  const { created, ...image } = record.image;
  return {
    id: record.id,
    name: record.name,
    created: new Date(record.created),
    image: { ...(image as LocalImage), ...(created ? { created: new Date(created) } : {}) },
    body: record.body,
    spec: containerSpecOf(record.body),
    argv: record.argv,
    env: record.env,
    tty: record.tty,
    openStdin: record.openStdin,
    autoRemove: record.autoRemove,
    labels: record.labels,
    status: state.status,
    pid: 0,
    exitCode: state.exitCode,
    ...(record.oomKilled && record.status !== 'running' ? { oomKilled: true } : {}),
    error: state.error,
    ...(record.startedAt ? { startedAt: new Date(record.startedAt) } : {}),
    ...(state.finishedAt ? { finishedAt: new Date(state.finishedAt) } : {}),
    log: output,
    stdin: record.openStdin ? new PassThrough() : undefined,
    exitWaiters: new Set(),
    removeWaiters: new Set(),
    ...(record.restartCount ? { restartCount: record.restartCount } : {}),
    ...(record.manuallyStopped ? { manuallyStopped: true } : {}),
    ...(record.health ? { health: record.health } : {}),
    ...(record.mounts ? { mounts: record.mounts } : {}),
  };
}

/** The legacy `output.log` form (kept to read state written by earlier versions). */
export function encodeLog(chunks: readonly LegacyChunk[]): Buffer {
  const parts: Buffer[] = [];
  for (const c of chunks) {
    const header = Buffer.alloc(HEADER);
    header.writeUInt8(c.stream, 0);
    header.writeDoubleBE(c.time, 1);
    header.writeUInt32BE(c.data.length, 9);
    parts.push(header, c.data);
  }
  return Buffer.concat(parts);
}

export function decodeLog(bytes: Buffer): LegacyChunk[] {
  const out: LegacyChunk[] = [];
  let at = 0;
  while (at + HEADER <= bytes.length) {
    const stream = bytes.readUInt8(at);
    const time = bytes.readDoubleBE(at + 1);
    const length = bytes.readUInt32BE(at + 9);
    if ((stream !== 1 && stream !== 2) || at + HEADER + length > bytes.length) break;
    out.push({ stream, time, data: Buffer.from(bytes.subarray(at + HEADER, at + HEADER + length)) });
    at += HEADER + length;
  }
  return out;
}
