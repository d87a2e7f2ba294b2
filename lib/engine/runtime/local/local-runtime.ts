import type { ContainerSpec } from '../../../engine-api/container-spec.js';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { EngineError } from '../../../engine-api/engine-error.js';
import type { AttachOptions, AttachSession, ContainerRuntime, CreateRequest, EventsOptions, ListOptions, LogsOptions, OutputStream,
  PullRequest, RemoveOptions, StopOptions, WaitCondition, WaitHandle, WaitResult } from '../../../engine-api/runtime-types.js';
import { upToDateProgress } from './pull-progress.js';
import { inspectView, keptBody } from './container-views.js';
import { EventBus } from './event-bus.js';
import { familiarImageRef } from '../../../engine-api/image-ref.js';
import { hasImageStore, type LocalContainer, type LocalExecutor } from './local-container.js';
import { OutputLog } from './output-log.js';
import { logSettings, type LogSettings } from './log-config.js';
import { ContainerTable } from './container-table.js';
import { newContainer } from './new-container.js';
import { ContainerStopping } from './container-stopping.js';
import type { LocalLimits } from './local-limits.js';
import { LocalImageStore } from './local-image-store.js';
import { LocalCatalog } from './local-catalog.js';
import { archiveOperations, execOperations, filesystemOperations, sizeRwOf } from './local-operations.js';
import { LocalContainerOps } from './local-container-ops.js';
import { LocalExecs } from './local-exec.js';
import type { ExecOperations } from '../../../engine-api/exec-operations.js';
import type { ContainerOperations } from '../../../engine-api/container-operations.js';
import { applyImageConfig } from './image-config.js';
import { StoreImageOperations } from './store-image-operations.js';
import { ContainerRecords } from './container-records.js';
import { restoreContainer } from './container-restore.js';
import type { ImageOperations } from '../../../engine-api/image-operations.js';
import { ContainerLifecycle } from './container-lifecycle.js';
import { LocalVolumes } from './local-volumes.js';
import { executionSpec, mountView, volumeNamesOf, type MountPoint } from './container-mounts.js';
import { mountsFor, removeAnonymous } from './volume-mounts.js';
import { attachTo, logsOf, newOutputLog } from './container-output.js';
import { listContainers } from './container-list.js';
import { storeImageOperations, userNetworkOperations, volumeOperations } from './optional-operations.js';
import { resolveMountSources } from './mount-sources.js';
import type { VolumeOperations } from '../../../engine-api/volume-operations.js';
import type { BuildOperations } from '../../../engine-api/build-operations.js';
import { localBuildOperations } from './local-build.js';
import { scheduleAutoRemove } from './auto-remove.js';
import { startFailed } from './start-failure.js';
import { withJoinedContainerId } from './joined-container.js';
import { launchContainer } from './start-launch.js';
import type { NetworkManagementOperations } from '../../../engine-api/network-operations.js';

/**
 * The container lifecycle shared by the sandbox, process and scripted runtimes: a table of
 * containers, each with a bounded {@link OutputLog}, lifecycle events, and waits. What actually
 * runs is the executor's business. An executor with an `imageStore` gets every image operation
 * (and pull, login) through it; one with a `stateDir` gets its containers and their output kept
 * across restarts ({@link ContainerRecords}).
 */
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
  /** `docker kill` and `docker stop` (container-stopping.ts). */
  private readonly stopping: ContainerStopping;
  /** Restart, rename, pause, top, stats, prune and update (local-container-ops.ts). */
  private readonly ops: LocalContainerOps;

  /** What the executor honors of a create body; the router refuses the rest (create-fields.ts). */
  readonly createFields: readonly string[] | undefined;

  constructor(
    readonly name: string,
    private readonly executor: LocalExecutor,
    private readonly limits: LocalLimits,
  ) {
    this.createFields = executor.createFields;
    const resolve = (ref: string): LocalContainer => this.table.resolve(ref);
    const publish = (action: string, c: LocalContainer, extra?: Record<string, string>): void => this.bus.publish(action, eventActor(c), extra);
    const configured = hasImageStore(executor.images) ? undefined : executor.images;
    this.images = new LocalImageStore(configured?.list() ?? [], (ref) => configured?.image(ref));
    const exec = executor.exec;
    this.lifecycle = new ContainerLifecycle(name, exec ? (run) => exec.run(run) : undefined, (action, c) => publish(action, c), {
      start: (c) => this.start(c.id),
      saved: (c) => void this.records?.save(c),
    });
    this.stopping = new ContainerStopping({ resolve, supervisor: this.lifecycle.supervisor, save: (c) => void this.records?.save(c), publish });
    this.catalog = new LocalCatalog(name, this.images, executor.networks, this.bus, () => this.table.all(), executor.userNetworks, executor.ociRuntime);
    this.ops = new LocalContainerOps({
      name, resolve, publish, saved: (c) => void this.records?.save(c), all: () => this.table.all(),
      rename: (c, newName) => {
        this.table.rename(c, newName);
        // A kept container keeps its new name across a restart.
        void this.records?.save(c);
      },
      start: (ref) => this.start(ref),
      stop: (ref, o) => this.stop(ref, o),
      remove: (ref, o) => this.remove(ref, o),
    }, sizeRwOf(executor.filesystem));
    // The operations the executor backs, taken field by field; without them the routes answer 501 (local-operations.ts).
    const fs = executor.filesystem;
    if (fs) ({ changes: this.changes, exportContainer: this.exportContainer } = filesystemOperations(fs, resolve));
    if (exec) {
      ({ createExec: this.createExec, startExec: this.startExec, inspectExec: this.inspectExec, resizeExec: this.resizeExec } = execOperations(new LocalExecs(exec, publish), resolve));
      if (fs) ({ statPath: this.statPath, getArchive: this.getArchive, putArchive: this.putArchive } = archiveOperations(exec, fs, resolve));
    }
    let images: Omit<ImageOperations, 'saveImages' | 'loadImages' | 'pushImage' | 'importImage'> = this.catalog;
    if (hasImageStore(executor.images)) {
      const store = executor.images.open((imageId) =>
        this.table.all().filter((c) => c.image.id === imageId).map((c) => ({ id: c.id, running: c.status === 'running' })));
      // Awaited by every image operation; a store that cannot open fails those, not the process.
      store.catch(() => undefined);
      const ops = new StoreImageOperations(store, this.bus);
      this.storeImages = ops;
      images = storeImageOperations(ops);
      ({ saveImages: this.saveImages, loadImages: this.loadImages, pushImage: this.pushImage, importImage: this.importImage, login: this.login } = storeImageOperations(ops));
      // `docker commit` and `docker build`, where the executor can make layers (local-build.ts).
      if (executor.build && fs) ({ commit: this.commit, build: this.build } = localBuildOperations({ runtime: this, store, resolve, publish: (action, c) => publish(action, c) }, executor.build, fs));
    }
    this.imageOps = images;
    let volumes: Pick<VolumeOperations, 'listVolumes' | 'inspectVolume'> = this.catalog;
    if (executor.volumes) {
      const { dir } = executor.volumes;
      const owner = executor.volumes.owner.bind(executor.volumes);
      this.volumes = new LocalVolumes(dir, name, () => this.table.all().map((c) => ({ id: c.id, names: volumeNamesOf(c.mounts ?? []) })), (labels) => owner(labels));
      volumes = volumeOperations(this.volumes);
      ({ createVolume: this.createVolume, removeVolume: this.removeVolume, pruneVolumes: this.pruneVolumes } = volumeOperations(this.volumes));
    }
    this.volumeViews = volumes;
    // User-defined networks (the sandbox's, sandbox-networks.ts); the runtime resolves the containers.
    if (executor.userNetworks) {
      const nets = executor.userNetworks;
      this.removeLink = (ref, alias) => this.ops.removeLink(ref, alias, (id, a) => nets.unlinked(id, a));
      ({ createNetwork: this.createNetwork, removeNetwork: this.removeNetwork, pruneNetworks: this.pruneNetworks, connectNetwork: this.connectNetwork, disconnectNetwork: this.disconnectNetwork } = userNetworkOperations(executor.userNetworks, resolve));
    }
    if (executor.stateDir !== undefined) {
      this.records = new ContainerRecords(executor.stateDir);
      for (const restored of this.records.loadAll()) {
        restoreContainer(restored, {
          runtime: name, maxLogBytes: limits.maxLogBytes, newLog: (id, logging) => this.newLog(id, logging), mountsFor: (body) => this.mountsFor(body),
          add: (c) => this.table.add(c), save: (c) => void this.records?.save(c),
          drop: (id) => {
            executor.removed(id);
            void this.records?.remove(id);
          },
        });
      }
      // Containers their restart policy brings back start once the runtime is constructed (dockerd's restore).
      setImmediate(() => {
        for (const c of this.lifecycle.supervisor.comeBack(this.table.all())) this.start(c.id).catch(() => undefined);
      });
    }
  }

  readonly systemInfo: LocalCatalog['systemInfo'] = async () => {
    const info = { ...(await this.catalog.systemInfo()), ...this.executor.limits?.systemInfo() };
    // With a store, images are pulled and loaded, not configured: say so in `docker info`.
    return this.storeImages ? { ...info, Driver: 'dockgate', DriverStatus: [['Images', 'content-addressed store (pull, load, save)']] } : info;
  };
  /** The image list and views: the store's, else the configured images' (local-catalog.ts). */
  private readonly imageOps: Omit<ImageOperations, 'saveImages' | 'loadImages' | 'pushImage' | 'importImage'>;
  listImages: ImageOperations['listImages'] = (o) => this.imageOps.listImages(o);
  inspectImage: ImageOperations['inspectImage'] = (ref, v) => this.imageOps.inspectImage(ref, v);
  imageHistory: ImageOperations['imageHistory'] = (ref, v) => this.imageOps.imageHistory(ref, v);
  tagImage: ImageOperations['tagImage'] = (ref, target) => this.imageOps.tagImage(ref, target);
  removeImage: ImageOperations['removeImage'] = (ref, o) => this.imageOps.removeImage(ref, o);
  pruneImages: ImageOperations['pruneImages'] = (filters, v) => this.imageOps.pruneImages(filters, v);
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
  /** The volume list and inspect: the runtime's volumes, else none (local-catalog.ts). */
  private readonly volumeViews: Pick<VolumeOperations, 'listVolumes' | 'inspectVolume'>;
  readonly listVolumes: VolumeOperations['listVolumes'] = (filters, v) => this.volumeViews.listVolumes(filters, v);
  readonly inspectVolume: VolumeOperations['inspectVolume'] = (name, v) => this.volumeViews.inspectVolume(name, v);
  /** Only with the executor's `volumes`; otherwise the routes answer 501. */
  createVolume?: VolumeOperations['createVolume'];
  removeVolume?: VolumeOperations['removeVolume'];
  pruneVolumes?: VolumeOperations['pruneVolumes'];
  /** Only when the executor makes user-defined networks (see the constructor). */
  createNetwork?: NetworkManagementOperations['createNetwork'];
  removeNetwork?: NetworkManagementOperations['removeNetwork'];
  pruneNetworks?: NetworkManagementOperations['pruneNetworks'];
  connectNetwork?: NetworkManagementOperations['connectNetwork'];
  disconnectNetwork?: NetworkManagementOperations['disconnectNetwork'];
  /** Only with the executor's exec (see the constructor). */
  createExec?: ExecOperations['createExec'];
  startExec?: ExecOperations['startExec'];
  inspectExec?: ExecOperations['inspectExec'];
  resizeExec?: ExecOperations['resizeExec'];
  /** `docker cp`, with exec and a filesystem of each container's own. */
  statPath?: ContainerOperations['statPath'];
  getArchive?: ContainerOperations['getArchive'];
  putArchive?: ContainerOperations['putArchive'];
  /** `docker rm --link`, only with user-defined networks (the default bridge's links are theirs). */
  removeLink?: ContainerOperations['removeLink'];
  /** `docker diff` and `docker export`, with a filesystem of each container's own. */
  changes?: ContainerOperations['changes'];
  exportContainer?: ContainerOperations['exportContainer'];
  readonly restart: ContainerOperations['restart'] = (ref, o) => this.ops.restart(ref, o);
  readonly rename: ContainerOperations['rename'] = (ref, n) => this.ops.rename(ref, n);
  readonly pause: ContainerOperations['pause'] = (ref) => this.ops.pause(ref);
  readonly unpause: ContainerOperations['unpause'] = (ref) => this.ops.unpause(ref);
  readonly top: ContainerOperations['top'] = (ref, a) => this.ops.top(ref, a);
  readonly stats: ContainerOperations['stats'] = (ref, o) => this.ops.stats(ref, o);
  readonly pruneContainers: ContainerOperations['pruneContainers'] = (filters) => this.ops.prune(filters);
  readonly update: ContainerOperations['update'] = (ref, b) => this.ops.update(ref, b, this.executor.limits && ((c, u) => this.executor.limits!.update(c, u)));

  async create({ name, spec: sent }: CreateRequest): Promise<{ id: string; warnings: string[] }> {
    const ref = familiarImageRef(sent.image);
    const image = this.storeImages ? await this.storeImages.localImage(sent.image) : this.images.find(sent.image);
    if (!image) throw EngineError.notFound(`No such image: ${ref}`);
    // The spec run is the one sent with the image's config and healthcheck applied.
    const applied = applyImageConfig(sent, image);
    const { argv, env, labels } = applied;
    let made = this.lifecycle.prepare(applied.spec, image);
    // This runtime is the only one it has, by its own name or the OCI name clients know (/info lists both).
    const wanted = sent.host.runtime;
    if (wanted !== '' && wanted !== this.name && wanted !== this.executor.ociRuntime) throw EngineError.invalidParameter(`Unknown runtime specified ${wanted}`);
    if (argv.length === 0) throw EngineError.invalidParameter('No command specified');
    if (this.table.size >= this.limits.maxContainers) {
      // dockerd has no such limit; 409 tells the client the state must change (remove some) first.
      throw EngineError.conflict(`too many containers (${this.limits.maxContainers}); remove some before creating more`);
    }
    // `--network container:REF` is resolved here, once, to the id it names now; the start joins
    // that container only (never whatever else the name or prefix matches by then), as dockerd.
    if (this.executor.userNetworks) made = withJoinedContainerId(made, (ref) => this.table.resolve(ref).id);
    // The body kept (and shown by inspect): the one sent, with what create settled written over it.
    const spec: ContainerSpec = { ...made, raw: keptBody(sent, made) };
    // Volumes named, anonymous and from other containers; the executor checks the spec as it will
    // run it (every one a bind of its directory). Anonymous volumes made for a refused body go.
    const mounts = this.mountsFor(spec);
    const id = randomBytes(32).toString('hex');
    let logging: LogSettings;
    let log: OutputLog;
    try {
      // Each host source's links resolved once, here: what the policy checked is what every start binds.
      if (mounts) await resolveMountSources(mounts);
      await this.executor.validate(mounts ? executionSpec(spec, mounts) : spec, image);
      this.executor.userNetworks?.created(id, spec, (ref) => this.table.resolve(ref).id); // legacy links, resolved once
      logging = logSettings(spec, this.name, this.limits.maxLogFilesBytes);
      log = this.openLog(id, logging);
    } catch (error) {
      this.removeAnonymous(mounts ?? []);
      throw error;
    }
    const container = newContainer({ id, name, image, spec, argv, env, labels, log, logging, mounts });
    this.table.add(container);
    await this.records?.save(container);
    this.bus.publish('create', eventActor(container));
    return { id, warnings: [] };
  }

  /** The mounts of a new container, when this runtime has volumes (volume-mounts.ts). */
  private mountsFor(spec: ContainerSpec): MountPoint[] | undefined {
    return mountsFor(spec, this.volumes, this.name, (ref) => this.table.resolve(ref));
  }

  private removeAnonymous(mounts: readonly MountPoint[]): void {
    removeAnonymous(mounts, this.volumes);
  }

  /**
   * A container's output, kept in its log files when the runtime keeps state (container-output.ts).
   */
  private newLog(id: string, logging: LogSettings): OutputLog {
    return newOutputLog(logging, this.limits.maxLogBytes, this.records?.logDir(id));
  }

  /** A new container's output log; its files that cannot be opened are a 500 saying so. */
  private openLog(id: string, logging: LogSettings): OutputLog {
    try {
      return this.newLog(id, logging);
    } catch (error) {
      throw EngineError.system(`cannot open the container's log files: ${(error as Error).message}`, error);
    }
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
    // The whole start, copy-up included, is `c.startup` from here: rm -f, stop and kill wait for it.
    const startup = launchContainer(c, { executor: this.executor, volumes: this.volumes, table: this.table, save: (x) => void this.records?.save(x) });
    c.startup = startup;
    let proc;
    try {
      proc = await startup;
    } catch (error) {
      if (c.startup === startup) c.startup = undefined;
      const failure = startFailed(c, before, error);
      void this.records?.save(c);
      // dockerd removes an AutoRemove container whose start failed: `docker run --rm` waits for that.
      if (c.autoRemove) this.destroy(c, true);
      throw failure;
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
    // Removed shortly after, as dockerd does, or once its attach streams delivered the last of its output (auto-remove.ts).
    if (c.autoRemove) scheduleAutoRemove(c, () => this.destroy(c, true));
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
    return logsOf(this.table.resolve(ref), options);
  }

  async attach(ref: string, options: AttachOptions): Promise<AttachSession> {
    return attachTo(this.table.resolve(ref), options);
  }

  async inspect(ref: string): Promise<Record<string, unknown>> {
    const c = this.table.resolve(ref);
    // dockerd shows the runtime asked for, else its default (`runc`): here the OCI name clients know, else this runtime's.
    const view = inspectView(c, c.status === 'running' ? undefined : this.executor.userNetworks?.stoppedEndpoints(c), c.spec.host.runtime || (this.executor.ociRuntime ?? this.name));
    return { ...view, Mounts: (c.mounts ?? []).map(mountView) };
  }

  async list(options: ListOptions): Promise<Record<string, unknown>[]> {
    const stopped = this.executor.userNetworks?.stoppedEndpoints.bind(this.executor.userNetworks);
    return listContainers(this.table.all(), options, stopped);
  }

  async remove(ref: string, { force, volumes }: RemoveOptions): Promise<void> {
    const c = this.table.resolve(ref);
    if (c.status === 'running' || c.restarting) {
      if (!force) {
        if (c.restarting) throw EngineError.conflict(`You cannot remove a restarting container ${c.id}. Stop the container before attempting removal or force remove`);
        throw EngineError.conflict(`You cannot remove a running container ${c.id}. Stop the container before attempting removal or force remove`);
      }
      this.lifecycle.supervisor.stoppedByUser(c);
      if (this.lifecycle.supervisor.cancelPending(c)) return this.destroy(c, volumes);
      // A start under way ends first: else its process and network stack came up after the answer.
      await c.startup?.catch(() => undefined);
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
    this.executor.removed(c.id);
    void this.records?.remove(c.id);
    if (volumes) this.removeAnonymous(c.mounts ?? []);
    this.bus.publish('destroy', eventActor(c));
    const result: WaitResult = { StatusCode: c.exitCode, Error: null };
    for (const notify of c.removeWaiters) notify(result);
    c.removeWaiters.clear();
  }

  async kill(ref: string, signal: NodeJS.Signals): Promise<void> {
    return this.stopping.kill(ref, signal);
  }

  async stop(ref: string, options: StopOptions): Promise<void> {
    return this.stopping.stop(ref, options);
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
    await Promise.all(this.table.all().map((c) => c.startup?.catch(() => undefined)));
    const running = this.table.all().filter((c) => c.status === 'running');
    for (const c of running) c.process?.kill('SIGKILL');
    await Promise.all(running.map((c) => c.process?.exited));
    await new Promise((resolve) => setImmediate(resolve));
    await Promise.all(this.table.all().map((c) => c.log.settled()));
    for (const c of this.table.all()) c.log.close();
    await this.records?.flush();
    await this.executor.close();
  }
}

function eventActor(c: LocalContainer): { id: string; name: string; image: string; labels: Record<string, string> } {
  return { id: c.id, name: c.name, image: c.spec.image, labels: c.labels };
}
