import { randomBytes } from 'node:crypto';
import { PassThrough, Readable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { EngineError } from '../../../engine-api/engine-error.js';
import type {
  AttachOptions, AttachSession, ContainerCreateBody, ContainerRuntime, CreateRequest, EventsOptions, ListOptions,
  LogsOptions, OutputStream, PullRequest, RemoveOptions, StopOptions, WaitCondition, WaitHandle, WaitResult,
} from '../../../engine-api/runtime-types.js';
import { signalNumber, stopSignal } from '../../../engine-api/signal.js';
import { upToDateProgress } from './pull-progress.js';
import { inspectView, summaryView } from './container-views.js';
import { EventBus } from './event-bus.js';
import { familiarImageRef } from '../../../engine-api/image-ref.js';
import { nameFilter } from '../../../engine-api/name-pattern.js';
import type { LocalContainer, LocalExecutor, LocalProcess } from './local-container.js';
import { LogReader } from './log-reader.js';
import { OutputLog } from './output-log.js';
import { LogFiles } from './log-files.js';
import { logSettings, keptLogSettings, type LogSettings } from './log-config.js';
import { ContainerTable } from './container-table.js';
import { labelMatches } from './label-filter.js';
import type { LocalLimits } from './local-limits.js';
import { MAX_TIMER_MS } from './event-bus.js';
import { LocalImageStore } from './local-image-store.js';
import { LocalCatalog } from './local-catalog.js';
import { localOperations, type LocalOperations } from './local-operations.js';
import { applyImageConfig } from './image-config.js';
import { StoreImageOperations } from './store-image-operations.js';
import { ContainerRecords, restoredContainer, type RestoredContainer } from './container-records.js';
import type { ImageOperations } from '../../../engine-api/image-operations.js';
import { ContainerLifecycle } from './container-lifecycle.js';
import { HEALTH_FILTER_VALUES } from './healthcheck.js';
import { LocalVolumes } from './local-volumes.js';
import { containerMounts, executionBody, mountView, volumeNamesOf, type MountPoint } from './container-mounts.js';
import { resolveMountSources } from './mount-sources.js';
import type { VolumeOperations } from '../../../engine-api/volume-operations.js';
import type { BuildOperations } from '../../../engine-api/build-operations.js';
import { localBuildOperations } from './local-build.js';
import { joinedContainerId, withJoinedContainerId } from './joined-container.js';
import type { NetworkManagementOperations } from '../../../engine-api/network-operations.js';

/** How long after its exit an AutoRemove container is removed (dockerd takes about this long). */
const AUTO_REMOVE_AFTER_MS = 200;

/**
 * The container lifecycle shared by the sandbox, process and scripted runtimes: a table of
 * containers, each with a bounded {@link OutputLog}, lifecycle events, and waits. What actually
 * runs is the executor's business. An executor with an `imageStore` gets every image operation
 * (and pull, login) through it; one with a `stateDir` gets its containers and their output kept
 * across restarts ({@link ContainerRecords}).
 */
// The exec and container operations are mixed in by the constructor (local-operations.ts).
// eslint-disable-next-line @typescript-eslint/no-empty-object-type, @typescript-eslint/no-unsafe-declaration-merging
export interface LocalRuntime extends LocalOperations {}
export class LocalRuntime implements ContainerRuntime {
  private readonly table = new ContainerTable();
  private readonly bus = new EventBus();
  private readonly images: LocalImageStore;
  /** Images, networks, volumes and /info: the optional operations, kept in their own file. */
  private readonly catalog: LocalCatalog;
  /** The executor's image store, when it has one: every image operation goes through it. */
  private readonly storeImages: StoreImageOperations | undefined;
  /** Where records and output are kept across restarts, when the executor says so. */
  private readonly records: ContainerRecords | undefined;
  /** Healthchecks and the restart supervisor (container-lifecycle.ts). */
  private readonly lifecycle: ContainerLifecycle;
  /** Named volumes, when the executor keeps them (local-volumes.ts). */
  private readonly volumes: LocalVolumes | undefined;

  constructor(
    readonly name: string,
    private readonly executor: LocalExecutor,
    private readonly limits: LocalLimits,
  ) {
    this.images = new LocalImageStore(executor.images?.() ?? [], (ref) => executor.image(ref));
    this.lifecycle = new ContainerLifecycle(name, executor.exec?.bind(executor), (action, c) => this.bus.publish(action, eventActor(c)), {
      start: (c) => this.start(c.id),
      saved: (c) => void this.records?.save(c),
    });
    this.catalog = new LocalCatalog(name, this.images, executor.networks ?? [], this.bus, () => this.table.all(), executor.userNetworks);
    // Exec, restart, rename, pause, top, stats, prune, update, archive (local-operations.ts).
    Object.assign(this, localOperations({
      name,
      resolve: (ref) => this.table.resolve(ref),
      rename: (c, newName) => {
        this.table.rename(c, newName);
        // A kept container keeps its new name across a restart.
        void this.records?.save(c);
      },
      saved: (c) => void this.records?.save(c),
      all: () => this.table.all(),
      publish: (action, c, extra) => this.bus.publish(action, eventActor(c), extra),
      start: (ref) => this.start(ref),
      stop: (ref, o) => this.stop(ref, o),
      remove: (ref, o) => this.remove(ref, o),
    }, executor));
    if (executor.imageStore) {
      const store = executor.imageStore((imageId) =>
        this.table.all().filter((c) => c.image.id === imageId).map((c) => ({ id: c.id, running: c.status === 'running' })));
      // Awaited by every image operation; a store that cannot open fails those, not the process.
      store.catch(() => undefined);
      const ops = new StoreImageOperations(store, this.bus);
      this.storeImages = ops;
      this.listImages = (o) => ops.listImages(o);
      this.inspectImage = (ref) => ops.inspectImage(ref);
      this.imageHistory = (ref) => ops.imageHistory(ref);
      this.tagImage = (ref, target) => ops.tagImage(ref, target);
      this.removeImage = (ref, o) => ops.removeImage(ref, o);
      this.pruneImages = (filters) => ops.pruneImages(filters);
      this.saveImages = (refs, signal) => ops.saveImages(refs, signal);
      this.loadImages = (request) => ops.loadImages(request);
      this.pushImage = (request) => ops.pushImage(request);
      this.importImage = (request) => ops.importImage(request);
      this.login = (request, options) => ops.login(request, options);
      // `docker commit` and `docker build`, where the executor can make layers (local-build.ts).
      if (executor.buildDir !== undefined) {
        Object.assign(this, localBuildOperations({
          runtime: this, store, resolve: (ref) => this.table.resolve(ref), publish: (action, c) => this.bus.publish(action, eventActor(c)),
          buildDir: executor.buildDir, maxContextBytes: executor.maxBuildContextBytes ?? 4 * 1024 ** 3,
        }, executor) ?? {});
      }
    }
    if (executor.volumesDir !== undefined) {
      const volumes = new LocalVolumes(executor.volumesDir, name, () => this.table.all().map((c) => ({ id: c.id, names: volumeNamesOf(c.mounts ?? []) })), executor.volumeOwner);
      this.volumes = volumes;
      this.listVolumes = async (filters) => volumes.list(filters);
      this.inspectVolume = async (volume) => volumes.inspect(volume);
      this.createVolume = async (body) => volumes.create(body);
      this.removeVolume = async (volume, force) => volumes.remove(volume, force);
      this.pruneVolumes = async (filters) => volumes.prune(filters);
    }
    if (executor.userNetworks) {
      // User-defined networks (the sandbox's, sandbox-networks.ts); the runtime resolves the containers.
      const nets = executor.userNetworks;
      this.createNetwork = (body) => nets.create(body);
      this.removeNetwork = (ref) => nets.remove(ref);
      this.pruneNetworks = (filters) => nets.prune(filters);
      this.connectNetwork = (ref, body) => nets.connect(ref, this.table.resolve(body.Container), body);
      this.disconnectNetwork = (ref, container, force) => nets.disconnect(ref, this.table.resolve(container), force);
    }
    if (executor.stateDir !== undefined) {
      this.records = new ContainerRecords(executor.stateDir);
      for (const restored of this.records.loadAll()) this.restore(restored);
      // Containers their restart policy brings back start once the runtime is constructed (dockerd's restore).
      setImmediate(() => {
        for (const c of this.lifecycle.supervisor.comeBack(this.table.all())) this.start(c.id).catch(() => undefined);
      });
    }
  }

  readonly systemInfo: LocalCatalog['systemInfo'] = async () => {
    const info = { ...(await this.catalog.systemInfo()), ...this.executor.systemInfo?.() };
    // With a store, images are pulled and loaded, not configured: say so in `docker info`.
    return this.storeImages ? { ...info, Driver: 'dockgate', DriverStatus: [['Images', 'content-addressed store (pull, load, save)']] } : info;
  };
  listImages: ImageOperations['listImages'] = (o) => this.catalog.listImages(o);
  inspectImage: ImageOperations['inspectImage'] = (ref) => this.catalog.inspectImage(ref);
  imageHistory: ImageOperations['imageHistory'] = (ref) => this.catalog.imageHistory(ref);
  tagImage: ImageOperations['tagImage'] = (ref, target) => this.catalog.tagImage(ref, target);
  removeImage: ImageOperations['removeImage'] = (ref, o) => this.catalog.removeImage(ref, o);
  pruneImages: ImageOperations['pruneImages'] = (filters) => this.catalog.pruneImages(filters);
  /** Only with an image store (see the constructor); a configured-images runtime answers 501. */
  saveImages?: ImageOperations['saveImages'];
  /** `POST /auth`, only with an image store. */
  login?: ContainerRuntime['login'];
  loadImages?: ImageOperations['loadImages'];
  /** `docker push`, only with an image store. */
  pushImage?: ImageOperations['pushImage'];
  /** `docker import`, only with an image store. */
  importImage?: ImageOperations['importImage'];
  /** `POST /commit` and `POST /build`, only where the executor makes layers (see the constructor). */
  commit?: BuildOperations['commit'];
  build?: BuildOperations['build'];
  readonly listNetworks: LocalCatalog['listNetworks'] = (filters) => this.catalog.listNetworks(filters);
  readonly inspectNetwork: LocalCatalog['inspectNetwork'] = (ref, o) => this.catalog.inspectNetwork(ref, o);
  readonly listVolumes: VolumeOperations['listVolumes'] = () => this.catalog.listVolumes();
  readonly inspectVolume: VolumeOperations['inspectVolume'] = (name) => this.catalog.inspectVolume(name);
  /** Only with the executor's `volumesDir`; otherwise the routes answer 501. */
  createVolume?: VolumeOperations['createVolume'];
  /** Only when the executor makes user-defined networks (see the constructor). */
  createNetwork?: NetworkManagementOperations['createNetwork'];
  removeNetwork?: NetworkManagementOperations['removeNetwork'];
  pruneNetworks?: NetworkManagementOperations['pruneNetworks'];
  connectNetwork?: NetworkManagementOperations['connectNetwork'];
  disconnectNetwork?: NetworkManagementOperations['disconnectNetwork'];
  removeVolume?: VolumeOperations['removeVolume'];
  pruneVolumes?: VolumeOperations['pruneVolumes'];

  async create({ name, body: sent }: CreateRequest): Promise<{ id: string; warnings: string[] }> {
    const ref = familiarImageRef(sent.Image);
    const image = this.storeImages ? await this.storeImages.localImage(sent.Image) : this.images.find(sent.Image);
    if (!image) throw EngineError.notFound(`No such image: ${ref}`);
    const applied = applyImageConfig(sent, image);
    const { argv, env, labels } = applied;
    let body = this.lifecycle.prepare(applied.body, image);
    // This runtime is the only one it has (/info lists it as Runtimes and DefaultRuntime).
    const wanted = body.HostConfig?.Runtime;
    if (wanted !== undefined && wanted !== null && wanted !== '' && wanted !== this.name) throw EngineError.invalidParameter(`Unknown runtime specified ${String(wanted)}`);
    if (argv.length === 0) throw EngineError.invalidParameter('No command specified');
    if (this.table.size >= this.limits.maxContainers) {
      // dockerd has no such limit; 409 tells the client the state must change (remove some) first.
      throw EngineError.conflict(`too many containers (${this.limits.maxContainers}); remove some before creating more`);
    }
    // `--network container:REF` is resolved here, once, to the id it names now; the start joins
    // that container only (never whatever else the name or prefix matches by then), as dockerd.
    if (this.executor.userNetworks) body = withJoinedContainerId(body, (ref) => this.table.resolve(ref).id);
    // Volumes named, anonymous and from other containers; the executor checks the body as it will
    // run it (every one a bind of its directory). Anonymous volumes made for a refused body go.
    const mounts = this.mountsFor(body);
    try {
      // Each host source's links resolved once, here: what the policy checked is what every start binds.
      if (mounts) await resolveMountSources(mounts);
      await this.executor.validate?.(mounts ? executionBody(body, mounts) : body, image);
    } catch (error) {
      this.removeAnonymous(mounts ?? []);
      throw error;
    }
    let logging: LogSettings;
    try {
      logging = logSettings(body, this.name, this.limits.maxLogFilesBytes);
    } catch (error) {
      this.removeAnonymous(mounts ?? []);
      throw error;
    }
    const id = randomBytes(32).toString('hex');
    let log: OutputLog;
    try {
      log = this.newLog(id, logging);
    } catch (error) {
      this.removeAnonymous(mounts ?? []);
      throw EngineError.system(`cannot open the container's log files: ${(error as Error).message}`, error);
    }
    const container: LocalContainer = {
      id,
      name: name ?? `dockgate_${id.slice(0, 12)}`,
      created: new Date(),
      image,
      body,
      argv,
      env,
      tty: body.Tty === true,
      openStdin: body.OpenStdin === true,
      autoRemove: body.HostConfig?.AutoRemove === true,
      labels,
      status: 'created',
      pid: 0,
      exitCode: 0,
      error: '',
      log,
      logging,
      stdin: body.OpenStdin === true ? new PassThrough() : undefined,
      exitWaiters: new Set(),
      removeWaiters: new Set(),
      ...(mounts ? { mounts } : {}),
    };
    this.table.add(container);
    await this.records?.save(container);
    this.bus.publish('create', eventActor(container));
    return { id, warnings: [] };
  }

  /** The mounts of a new container, when this runtime has volumes (container-mounts.ts). */
  private mountsFor(body: ContainerCreateBody): MountPoint[] | undefined {
    const volumes = this.volumes;
    if (!volumes) return undefined;
    const made: MountPoint[] = [];
    try {
      return containerMounts(body, {
        runtime: this.name,
        named: (name) => volumes.named(name, body.Labels),
        anonymous: () => {
          const volume = volumes.anonymous(body.Labels);
          made.push({ Type: 'volume', Name: volume.name, Source: volume.source, Destination: '', Mode: '', RW: true, Propagation: '', anonymous: true });
          return volume;
        },
        mountsOf: (ref) => {
          try {
            return this.table.resolve(ref).mounts ?? [];
          } catch (error) {
            // dockerd answers 400 here (a bad create body), not the lookup's 404, which the CLI would take for a missing image and pull.
            if (error instanceof EngineError && error.kind === 'NotFound') throw EngineError.invalidParameter(error.message);
            throw error;
          }
        },
      });
    } catch (error) {
      this.removeAnonymous(made);
      throw error;
    }
  }

  /** Removes the anonymous volumes among `mounts` (`docker rm -v`, `--rm`); one still in use by another container stays, as with dockerd. */
  private removeAnonymous(mounts: readonly MountPoint[]): void {
    for (const m of mounts) {
      if (m.anonymous && m.Name) {
        try {
          this.volumes?.remove(m.Name, false);
        } catch {
          // In use through VolumesFrom: dockerd keeps it too.
        }
      }
    }
  }

  /**
   * `--network container:ID`: the container of the id stored at create must still exist (404) and
   * run (409, dockerd's words). Only that id: nothing is looked up again by name or prefix.
   */
  private checkJoined(c: LocalContainer): void {
    const id = this.executor.userNetworks ? joinedContainerId(c.body) : undefined;
    if (id === undefined) return;
    const target = this.table.has(id) ? this.table.resolve(id) : undefined;
    if (!target || target.status === 'removing') throw EngineError.notFound(`No such container: ${id}`);
    if (target.status !== 'running') throw EngineError.conflict(`cannot join network of a non running container: ${id}`);
  }

  /** Fills each empty volume with what the image has at its path, once, before the first start (dockerd's copy-up). */
  private async copyUp(c: LocalContainer): Promise<void> {
    const copy = this.executor.copyImagePath;
    if (!copy || !c.mounts?.some((m) => m.copy)) return;
    for (const m of c.mounts) {
      if (!m.copy || m.Type !== 'volume' || !m.Name) continue;
      if (await this.volumes?.isEmpty(m.Name)) await copy.call(this.executor, c, m.Destination, m.Source);
      m.copy = false;
    }
    void this.records?.save(c);
  }

  /**
   * A container's output: appended to its log files as it comes when the runtime keeps state
   * (json-file and its alias local), in memory otherwise; with `none`, only to whoever is attached.
   */
  private newLog(id: string, logging: LogSettings): OutputLog {
    const capacity = this.limits.maxLogBytes;
    if (logging.driver === 'none') return new OutputLog({ capacity, keep: false });
    if (!this.records || !logging.rotation) return new OutputLog({ capacity });
    return new OutputLog({ capacity, files: LogFiles.open(this.records.logDir(id), logging.rotation) });
  }

  /** A container kept by an earlier server: back in the table as it was, a running one as exited. */
  private restore(restored: RestoredContainer): void {
    const logging = keptLogSettings(restored.record.body, this.name);
    let log: OutputLog;
    try {
      log = this.newLog(restored.record.id, logging);
    } catch {
      log = new OutputLog({ capacity: this.limits.maxLogBytes });
    }
    const back: LocalContainer = { ...restoredContainer(restored, log), logging };
    // A record from before mounts were kept: its binds and named volumes, as it ran them.
    if (!back.mounts && this.volumes) {
      try {
        back.mounts = this.mountsFor({ ...back.body, Volumes: null, HostConfig: { ...(back.body.HostConfig ?? {}), VolumesFrom: null } });
      } catch {
        back.mounts = [];
      }
    }
    // An AutoRemove container that was running is removed on the way back, as dockerd does after a crash.
    if (back.autoRemove && back.status !== restored.record.status) {
      log.close();
      this.executor.removed?.(back.id);
      void this.records?.remove(back.id);
      return;
    }
    try {
      this.table.add(back);
    } catch {
      log.close();
      return;
    }
    if (back.status !== restored.record.status) void this.records?.save(back);
  }

  async start(ref: string): Promise<void> {
    const c = this.table.resolve(ref);
    if (c.status === 'running') throw EngineError.notModified('Container is already started');
    if (c.status === 'removing') throw EngineError.conflict('container is marked for removal and cannot be started');
    this.lifecycle.starting(c);
    const before = { status: c.status, startedAt: c.startedAt, finishedAt: c.finishedAt };
    c.status = 'running';
    c.startedAt = new Date();
    c.error = '';
    c.oomKilled = false;
    c.log.beginRun();
    let proc;
    let startup: Promise<unknown> | undefined;
    try {
      this.checkJoined(c);
      // A record kept by a server that did not resolve sources at create: resolved now, once.
      if (c.mounts) await resolveMountSources(c.mounts);
      await this.copyUp(c);
      const launching = this.executor.start({
        argv: c.argv,
        env: c.env,
        image: c.image,
        openStdin: c.openStdin,
        id: c.id,
        name: c.name,
        body: c.mounts ? executionBody(c.body, c.mounts) : c.body,
        tty: c.tty,
        output: (stream, data) => {
          c.log.append(c.tty ? 1 : stream, data);
          if (c.log.full) c.process?.pause();
        },
      });
      // `running` from here on, but without a process until the executor answers (the sandbox's
      // network gate takes a while): a stop or kill meanwhile waits for it, as dockerd's does
      // for its container lock, instead of answering "already stopped".
      startup = launching;
      c.startup = launching;
      proc = await launching;
    } catch (error) {
      if (c.startup === startup) c.startup = undefined;
      // Something the container names is gone (its network) or does not run (the container whose
      // network it joins): nothing ran. dockerd answers that 404 or 409 as it is and leaves the
      // container as it was, with exit code 128 and the error.
      const missing = error instanceof EngineError && (error.kind === 'NotFound' || error.kind === 'Conflict' || error.kind === 'InvalidParameter');
      c.status = missing ? before.status : 'exited';
      c.exitCode = missing ? 128 : 127;
      c.error = (error as Error).message;
      if (missing) {
        c.startedAt = before.startedAt;
        c.finishedAt = before.finishedAt;
      } else c.finishedAt = new Date();
      c.log.endRun();
      void this.records?.save(c);
      // dockerd removes an AutoRemove container whose start failed: `docker run --rm` waits for that.
      if (c.autoRemove) this.destroy(c, true);
      if (missing) throw error;
      // A refusal of what the container itself holds (a link at its /etc) is the caller's to fix: a 400.
      if (error instanceof EngineError && error.kind === 'InvalidParameter') throw EngineError.invalidParameter(`failed to start container ${c.id}: ${error.message}`);
      throw EngineError.system(`failed to start container ${c.id}: ${(error as Error).message}`, error);
    }
    if (c.startup === startup) c.startup = undefined;
    c.process = proc;
    c.pid = proc.pid;
    const resume = (): void => proc.resume();
    c.log.on('drain', resume);
    if (c.log.full) proc.pause();
    if (c.stdin && proc.stdin) c.stdin.pipe(proc.stdin).on('error', () => undefined);
    void this.records?.save(c);
    this.bus.publish('start', eventActor(c));
    this.lifecycle.started(c);
    void proc.exited.then((code) => this.exited(c, code, resume));
  }

  private exited(c: LocalContainer, code: number, resume: () => void): void {
    c.log.off('drain', resume);
    c.status = 'exited';
    c.exitCode = code;
    c.oomKilled = c.process?.oomKilled?.() === true;
    const reason = c.process?.stopReason?.();
    if (reason) c.error = reason;
    c.finishedAt = new Date();
    c.process = undefined;
    c.log.endRun();
    this.lifecycle.exited(c, code);
    if (!c.autoRemove) void this.records?.save(c);
    // dockerd publishes `oom` before `die` when the OOM killer took the container's process.
    if (c.oomKilled) this.bus.publish('oom', eventActor(c));
    this.bus.publish('die', eventActor(c), { exitCode: String(code) });
    const result: WaitResult = { StatusCode: code, Error: null };
    for (const notify of c.exitWaiters) notify(result);
    c.exitWaiters.clear();
    // dockerd removes an AutoRemove container about 0.2 s after its exit (measured: die → destroy
    // 160-210 ms), and clients count on that: docker-py's containers.run(auto_remove=True) asks
    // for the logs after start, when a quick command has already exited. A client attached
    // before the exit (`docker run --rm`, which then waits for "removed" or the destroy event)
    // already has the output: the container goes as soon as its attach streams have delivered
    // the last of it, which is what makes `docker run --rm` no slower than dockerd's.
    if (c.autoRemove) {
      const remove = (): void => {
        clearTimeout(timer);
        c.onDetach = undefined;
        if (c.status !== 'running') this.destroy(c, true);
      };
      const timer = setTimeout(remove, AUTO_REMOVE_AFTER_MS).unref();
      if ((c.attachedStreams ?? 0) > 0) c.onDetach = () => (c.attachedStreams ?? 0) === 0 && remove();
    }
  }

  async wait(ref: string, condition: WaitCondition, signal?: AbortSignal): Promise<WaitHandle> {
    const c = this.table.resolve(ref);
    if (condition === 'not-running' && c.status !== 'running') {
      return { result: Promise.resolve({ StatusCode: c.exitCode, Error: null }) };
    }
    const waiters = condition === 'removed' ? c.removeWaiters : c.exitWaiters;
    const result = new Promise<WaitResult>((resolve) => {
      waiters.add(resolve);
      signal?.addEventListener('abort', () => waiters.delete(resolve));
    });
    return { result };
  }

  async logs(ref: string, options: LogsOptions): Promise<OutputStream> {
    const c = this.table.resolve(ref);
    // dockerd's words and status for a driver that cannot be read back (daemon/logs.go).
    if (c.logging?.driver === 'none') throw EngineError.notImplemented('configured logging driver does not support reading');
    const log = c.log;
    const stream = new LogReader(log, {
      from: log.start,
      ...(options.tail !== undefined ? { tail: options.tail } : {}),
      ...(options.follow ? { untilRunsEnded: this.runToFollow(c) } : { stopAt: log.end }),
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

  async attach(ref: string, options: AttachOptions): Promise<AttachSession> {
    const c = this.table.resolve(ref);
    const log = c.log;
    const stream = new LogReader(log, {
      from: options.logs ? log.start : log.end,
      ...(options.stream ? { untilRunsEnded: this.runToFollow(c) } : { stopAt: log.end }),
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
    const keepStdinOpen = c.tty || c.body.StdinOnce !== true;
    return { stream, multiplexed: !c.tty, ...(options.stdin && c.stdin ? { stdin: c.stdin, keepStdinOpen } : {}) };
  }

  /** A follower of a running container ends with this run; of a created one, with its first run. */
  private runToFollow(c: LocalContainer): number {
    if (c.status === 'running') return c.log.runsStarted;
    if (c.status === 'created') return c.log.runsStarted + 1;
    return c.log.runsEnded;
  }

  async inspect(ref: string): Promise<Record<string, unknown>> {
    const c = this.table.resolve(ref);
    const view = inspectView(c, c.status === 'running' ? undefined : this.executor.userNetworks?.stoppedEndpoints?.(c));
    // dockerd shows the runtime that runs the container (`runc`); here it is this runtime.
    return { ...view, HostConfig: { ...(view.HostConfig as Record<string, unknown>), Runtime: this.name }, Mounts: (c.mounts ?? []).map(mountView) };
  }

  async list({ all, limit, filters }: ListOptions): Promise<Record<string, unknown>[]> {
    const now = Date.now();
    const pick = (name: string): ReadonlySet<string> | undefined => {
      const set = filters.get(name);
      return set && set.size > 0 ? set : undefined;
    };
    const ids = pick('id');
    const named = nameFilter(filters, true);
    const statuses = pick('status');
    const labels = pick('label');
    const ancestors = pick('ancestor');
    const health = pick('health');
    for (const value of health ?? []) {
      if (!(HEALTH_FILTER_VALUES as readonly string[]).includes(value)) throw EngineError.invalidParameter(`Unrecognised filter value for health: ${value}`);
    }
    // A limit counts the latest containers whatever their state, as dockerd's does: `docker ps -l`
    // and `-n N` send only `limit` and show a stopped container too.
    const everyState = all || (limit !== undefined && limit > 0) || statuses !== undefined;
    let rows = this.table
      .all()
      .filter((c) => everyState || c.status === 'running' || c.restarting === true)
      .filter((c) => !ids || [...ids].some((p) => c.id.startsWith(p)))
      .filter((c) => named(c.name))
      .filter((c) => !statuses || statuses.has(c.restarting ? 'restarting' : c.status))
      .filter((c) => !health || health.has(c.health?.Status ?? 'none'))
      .filter((c) => !ancestors || [...ancestors].some((a) => familiarImageRef(a) === c.image.ref))
      .filter((c) => !labels || [...labels].every((l) => labelMatches(c.labels, l)))
      .sort((a, b) => b.created.getTime() - a.created.getTime());
    if (limit !== undefined && limit > 0) rows = rows.slice(0, limit);
    const stopped = this.executor.userNetworks?.stoppedEndpoints?.bind(this.executor.userNetworks);
    return rows.map((c) => summaryView(c, now, c.status === 'running' || !stopped ? undefined : stopped(c)));
  }

  async remove(ref: string, { force, volumes }: RemoveOptions): Promise<void> {
    const c = this.table.resolve(ref);
    if (c.status === 'running' || c.restarting) {
      if (!force) {
        if (c.restarting) throw EngineError.conflict(`You cannot remove a restarting container ${c.id}. Stop the container before attempting removal or force remove`);
        throw EngineError.conflict(
          `You cannot remove a running container ${c.id}. Stop the container before attempting removal or force remove`,
        );
      }
      this.lifecycle.supervisor.stoppedByUser(c);
      if (this.lifecycle.supervisor.cancelPending(c)) return this.destroy(c, volumes);
      const proc = c.process;
      c.autoRemove = true;
      proc?.kill('SIGKILL');
      await proc?.exited;
      await new Promise((resolve) => setImmediate(resolve));
      // Removed now, not after the AutoRemove delay: rm -f answers once the container is gone.
      this.destroy(c, volumes);
      return;
    }
    if (c.status === 'removing') return;
    this.destroy(c, volumes);
  }

  /** Removes the container; with `volumes` (`docker rm -v`, AutoRemove) also the anonymous volumes made for it. */
  private destroy(c: LocalContainer, volumes = false): void {
    if (!this.table.has(c.id)) return;
    c.status = 'removing';
    this.lifecycle.removed(c);
    this.table.delete(c);
    c.log.close();
    c.stdin?.end();
    this.executor.removed?.(c.id);
    void this.records?.remove(c.id);
    if (volumes) this.removeAnonymous(c.mounts ?? []);
    this.bus.publish('destroy', eventActor(c));
    const result: WaitResult = { StatusCode: c.exitCode, Error: null };
    for (const notify of c.removeWaiters) notify(result);
    c.removeWaiters.clear();
  }

  async kill(ref: string, signal: NodeJS.Signals): Promise<void> {
    let c: LocalContainer;
    try {
      c = this.table.resolve(ref);
    } catch (error) {
      // dockerd prefixes every kill failure, even the lookup (daemon/kill.go).
      if (error instanceof EngineError && error.kind === 'NotFound') throw EngineError.notFound(`Cannot kill container: ${ref}: ${error.message}`);
      throw error;
    }
    // dockerd's kill with SIGKILL or the stop signal cancels the restart policy's next restart (ExitOnNext).
    const cancel = signal === 'SIGKILL' || signal === stopSignal(c.body.StopSignal);
    if (c.restarting) {
      this.lifecycle.supervisor.stoppedByUser(c, cancel);
      if (cancel) this.lifecycle.supervisor.cancelPending(c);
      void this.records?.save(c);
      return;
    }
    await c.startup?.catch(() => undefined);
    const proc = c.process;
    if (c.status !== 'running' || !proc) throw EngineError.conflict(`Cannot kill container: ${ref}: Container ${c.id} is not running`);
    this.lifecycle.supervisor.stoppedByUser(c, cancel);
    this.signal(c, proc, signal);
    // dockerd's kill with SIGKILL returns once the container is gone, so `docker kill; docker inspect` sees it exited.
    if (signal === 'SIGKILL') await this.settled(proc);
  }

  async stop(ref: string, { timeout, signal }: StopOptions): Promise<void> {
    const c = this.table.resolve(ref);
    // A container waiting for its restart stops by not restarting (dockerd cancels its restart manager).
    if (this.lifecycle.supervisor.cancelPending(c)) {
      this.lifecycle.supervisor.stoppedByUser(c);
      void this.records?.save(c);
      this.bus.publish('stop', eventActor(c));
      return;
    }
    await c.startup?.catch(() => undefined);
    const proc = c.process;
    if (c.status !== 'running' || !proc) throw EngineError.notModified('Container is already stopped');
    this.lifecycle.supervisor.stoppedByUser(c);
    const configured = c.body.StopTimeout;
    const seconds = timeout ?? (typeof configured === 'number' && Number.isInteger(configured) ? configured : 10);
    this.signal(c, proc, signal ?? stopSignal(c.body.StopSignal));
    // Negative waits for the exit, as dockerd does; so does a wait longer than a timer can hold.
    if (seconds >= 0 && seconds * 1000 <= MAX_TIMER_MS) {
      const grace = new AbortController();
      const exitedInTime = await Promise.race([proc.exited.then(() => true), delay(seconds * 1000, false, { signal: grace.signal }).catch(() => false)]);
      grace.abort();
      if (!exitedInTime) this.signal(c, proc, 'SIGKILL');
    }
    await this.settled(proc);
    this.bus.publish('stop', eventActor(c));
  }

  private signal(c: LocalContainer, proc: LocalProcess, signal: NodeJS.Signals): void {
    this.bus.publish('kill', eventActor(c), { signal: String(signalNumber(signal)) });
    proc.kill(signal);
  }

  /** Resolves after the exit bookkeeping (status, waits, auto-removal) has run. */
  private async settled(proc: LocalProcess): Promise<void> {
    await proc.exited;
    await new Promise((resolve) => setImmediate(resolve));
  }

  /** `POST /containers/{id}/resize`: the container's terminal size (Tty containers of executors that have one). */
  async resize(ref: string, size: { height: number; width: number }): Promise<void> {
    const c = this.table.resolve(ref);
    const proc = c.process;
    if (c.status !== 'running' || !proc) throw EngineError.conflict(`Container ${c.id} is not running`);
    if (!c.tty) return; // dockerd ignores a resize of a container without a terminal.
    if (!proc.resize) throw EngineError.unsupported('resizing terminals', this.name);
    proc.resize(size.height, size.width);
  }

  async pull(request: PullRequest): Promise<Readable> {
    if (this.storeImages) return this.storeImages.pull(request);
    if (!this.images.find(request.ref)) {
      // dockerd's words here would be Docker Hub's "pull access denied … may require 'docker login'",
      // which sends users to log in for an image this runtime can never fetch: say what is true.
      throw EngineError.notFound(`No such image: ${request.ref} (this engine cannot pull images; it runs only the images it is configured with)`);
    }
    return Readable.from([Buffer.from(upToDateProgress(request))]);
  }

  async events(options: EventsOptions): Promise<Readable> {
    return this.bus.subscribe(options);
  }

  async close(): Promise<void> {
    this.lifecycle.close();
    const running = this.table.all().filter((c) => c.status === 'running');
    for (const c of running) c.process?.kill('SIGKILL');
    await Promise.all(running.map((c) => c.process?.exited));
    await new Promise((resolve) => setImmediate(resolve));
    await Promise.all(this.table.all().map((c) => c.log.settled()));
    for (const c of this.table.all()) c.log.close();
    await this.records?.flush();
    await this.executor.close?.();
  }
}

function eventActor(c: LocalContainer): { id: string; name: string; image: string; labels: Record<string, string> } {
  return { id: c.id, name: c.name, image: c.body.Image, labels: c.labels };
}

