import { lstat, mkdir, mkdtemp, open, rm } from 'node:fs/promises';
import { join, posix } from 'node:path';
import type { Readable } from 'node:stream';
import { EngineError } from '../../engine-api/engine-error.js';
import { containerSpecOf, type ContainerCreateBody } from '../../engine-api/container-spec.js';
import { refuseUnsupportedFields } from '../../engine-api/create-fields.js';
import type { BuildRequest } from '../../engine-api/build-operations.js';
import { FrameDecoder, STREAM_STDERR } from '../../engine-api/stdcopy.js';
import { parsePullReference } from '../../engine-api/pull-reference.js';
import type { ImageConfigBlob, ImageHistoryEntry, StoredLayer } from '../images/image-store-types.js';
import { applyLayer, resolveInRoot } from '../images/store/apply-layer.js';
import { decompressedLayer } from '../images/store/decompress.js';
import { createReadStream } from 'node:fs';
import type { BuildBackend } from './build-backend.js';
import { BuildCache } from './build-cache.js';
import { BuildOutput } from './build-output.js';
import { planBuild, type BuildPlan } from './build-plan.js';
import { BuildContext } from './context/build-context.js';
import { commandForm, splitFlags, splitWords } from './dockerfile/instruction-args.js';
import { parseDockerfile, type DockerfileInstruction } from './dockerfile/parse-dockerfile.js';
import { processWord, processWords, variablesOf } from './dockerfile/substitute.js';
import { applyConfigInstruction, CONFIG_INSTRUCTIONS, type ConfigState } from './instructions/config-instructions.js';
import { copyEntries, withParents, type CopySource } from './instructions/copy-entries.js';

/** ARGs every build knows without a declaration (dockerd's builtinAllowedBuildArgs). */
const PREDEFINED_ARGS = ['HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'https_proxy', 'FTP_PROXY', 'ftp_proxy', 'NO_PROXY', 'no_proxy', 'ALL_PROXY', 'all_proxy'];

/** A stage being built: the image so far and its config. */
interface StageState {
  /** The image so far (`''` for a scratch stage with no step yet). */
  imageId: string;
  blob: ImageConfigBlob;
  run: ConfigState;
  /** ARGs declared in the stage with their values. */
  args: Map<string, string>;
}

const short = (id: string): string => id.replace(/^sha256:/, '').slice(0, 12);

/**
 * `POST /build`, the classic builder (what `DOCKER_BUILDKIT=0 docker build` and the SDKs drive):
 * spools and reads the context and the Dockerfile first (a bad one is a 400 before any output,
 * as dockerd answers), then runs the steps, writing dockerd's message stream. RUN steps are
 * containers of the runtime, committed into a layer; COPY and ADD write a layer from the files;
 * everything else changes the config. Each step's result is an image and a cache entry. A failure
 * is the stream's `errorDetail`; it tags nothing and removes the step's container.
 */
export async function classicBuild(backend: BuildBackend, request: BuildRequest): Promise<Readable> {
  await mkdir(backend.tempDir, { recursive: true, mode: 0o700 });
  const context = await BuildContext.spool(request.context, backend.tempDir, backend.maxContextBytes);
  let plan: BuildPlan;
  let escape: string;
  try {
    const parsed = parseDockerfile(await context.dockerfile(request.dockerfile));
    escape = parsed.escape;
    plan = planBuild(parsed, request.target, request.labels);
  } catch (error) {
    await context.dispose();
    throw error;
  }
  const out = new BuildOutput(request.quiet);
  const build = new Build(backend, request, context, plan, escape, out, await backend.cache());
  void build.run().finally(() => context.dispose());
  return out.stream;
}

class Build {
  #step = 0;
  /** Each finished stage's image, by name and by index. */
  readonly #stages = new Map<string, string>();
  readonly #consumed = new Set<string>();
  readonly #meta = new Map<string, string>();
  /** Containers of this build still to remove (a failure or an abandoned build removes them). */
  readonly #containers = new Set<string>();
  #allowedCache: Set<string> | undefined;

  constructor(
    readonly backend: BuildBackend,
    readonly request: BuildRequest,
    readonly context: BuildContext,
    readonly plan: BuildPlan,
    readonly escape: string,
    readonly out: BuildOutput,
    readonly cache: BuildCache,
  ) {}

  async run(): Promise<void> {
    try {
      for (const instruction of this.plan.metaArgs) {
        this.#announce(instruction);
        this.#declareMeta(instruction);
      }
      await this.#cacheFrom();
      let last = '';
      for (const [index, stage] of this.plan.stages.entries()) {
        const state = await this.#from(stage.from);
        for (const instruction of stage.instructions) {
          if (this.request.signal.aborted) throw EngineError.system('the build was cancelled');
          this.#announce(instruction);
          await this.#execute(state, instruction);
        }
        const id = await this.#ensureImage(state);
        this.#stages.set(String(index), id);
        if (stage.name) this.#stages.set(stage.name, id);
        last = id;
      }
      const unused = Object.keys(this.request.buildArgs).filter((a) => !this.#consumed.has(a) && !PREDEFINED_ARGS.includes(a));
      if (unused.length > 0) this.out.text(`[Warning] One or more build-args [${unused.join(' ')}] were not consumed\n`);
      for (const tag of this.request.tags) await this.backend.runtime.tagImage?.(last, tag);
      // Quiet, dockerd writes only the ID, as a stream message (no aux).
      if (this.request.quiet) this.out.always(`${last}\n`);
      else this.out.aux({ ID: last });
      this.out.text(`Successfully built ${short(last)}\n`);
      for (const tag of this.request.tags) this.out.text(`Successfully tagged ${tag}\n`);
      this.out.end();
    } catch (error) {
      const code = (error as { exitCode?: number }).exitCode;
      const message = error instanceof EngineError || code !== undefined ? (error as Error).message : `build failed: ${(error as Error).message}`;
      this.out.fail(message, code);
    } finally {
      for (const id of this.#containers) await this.backend.runtime.remove(id, { force: true, volumes: true }).catch(() => undefined);
    }
  }

  #announce(instruction: DockerfileInstruction): void {
    this.#step++;
    this.out.text(`Step ${this.#step}/${this.plan.total} : ${instruction.original}`);
    this.out.text('\n');
  }

  #declareMeta(instruction: DockerfileInstruction): void {
    for (const [name, value] of this.#argPairs(instruction, variablesOf([]), this.#meta)) this.#meta.set(name, value);
  }

  /** `ARG a[=default] b…`: each name with the value the build gives it (buildargs, else the default, else the meta ARG). */
  #argPairs(instruction: DockerfileInstruction, vars: Map<string, string>, inherited: Map<string, string>): [string, string][] {
    const out: [string, string][] = [];
    for (const word of splitWords(instruction.args, this.escape)) {
      const eq = word.indexOf('=');
      const name = eq < 0 ? word : word.slice(0, eq);
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw EngineError.invalidParameter(`ARG names can not be blank or contain invalid characters: ${name}`);
      this.#consumed.add(name);
      const given = this.request.buildArgs[name];
      if (given !== undefined && given !== null) out.push([name, given]);
      else if (eq >= 0) out.push([name, processWord(word.slice(eq + 1), vars, this.escape)]);
      else if (inherited.has(name)) out.push([name, inherited.get(name) as string]);
    }
    return out;
  }

  async #cacheFrom(): Promise<void> {
    if (this.request.cacheFrom.length === 0) return;
    this.#allowedCache = new Set();
    for (const ref of this.request.cacheFrom) {
      const image = await this.backend.store.resolve(ref).catch(() => undefined);
      if (image) for (const id of this.cache.chain(image.id)) this.#allowedCache.add(id);
    }
  }

  async #from(instruction: DockerfileInstruction): Promise<StageState> {
    this.#announce(instruction);
    const { flags, rest } = splitFlags(instruction.args, ['platform']);
    const platform = flags.get('platform');
    if (platform !== undefined && processWord(platform, this.#meta, this.escape) !== this.backend.platform) {
      throw EngineError.invalidParameter(`FROM --platform=${platform}: only this server's platform (${this.backend.platform}) can be built`);
    }
    const words = processWords(rest, this.#meta, this.escape);
    if (words.length !== 1 && !(words.length === 3 && words[1]?.toLowerCase() === 'as')) throw EngineError.invalidParameter('FROM requires either one or three arguments');
    const name = words[0] as string;
    const fromStage = this.#stages.get(name.toLowerCase());
    let blob: ImageConfigBlob;
    let imageId = '';
    if (fromStage) {
      imageId = fromStage;
      blob = await this.backend.store.config(imageId);
    } else if (name.toLowerCase() === 'scratch') {
      const [os, architecture] = this.backend.platform.split('/') as [string, string];
      blob = { architecture, os, config: {}, rootfs: { type: 'layers', diff_ids: [] }, history: [] };
    } else {
      let image = this.request.pull ? undefined : await this.backend.store.resolve(name);
      if (!image) {
        await this.#pull(name);
        image = await this.backend.store.resolve(name);
      }
      if (!image) throw EngineError.notFound(`No such image: ${name}`);
      // Under a policy, an image the caller may not see is one the build cannot use.
      await this.request.checkImage?.(name, image.id);
      imageId = image.id;
      blob = image.config;
    }
    const config = structuredClone(blob);
    config.config = config.config ?? {};
    const state: StageState = {
      imageId, blob: config, args: new Map(),
      run: { config: config.config, shell: (config.config.Shell as string[] | undefined) ?? ['/bin/sh', '-c'], cmdSet: false },
    };
    if (imageId !== '') this.out.text(` ---> ${short(imageId)}\n`);
    const triggers = (config.config.OnBuild as string[] | null | undefined) ?? [];
    if (triggers.length > 0) {
      this.out.text(`# Executing ${triggers.length} build trigger${triggers.length === 1 ? '' : 's'}\n`);
      config.config.OnBuild = null;
      for (const trigger of parseDockerfile(triggers.join('\n')).instructions) await this.#execute(state, trigger, true);
    }
    return state;
  }

  async #pull(name: string): Promise<void> {
    const pull = this.backend.runtime.pull;
    if (!pull) throw EngineError.notFound(`No such image: ${name}`);
    const ref = parsePullReference(name);
    // A FROM pull writes a tag and reaches a registry as `docker pull` does: the same policy judges it.
    await this.request.checkPull?.(ref.ref);
    const progress = await pull.call(this.backend.runtime, {
      ref: ref.ref, path: ref.path, tagOrDigest: ref.tagOrDigest, fromImage: name, apiVersion: this.request.apiVersion, signal: this.request.signal,
      ...(this.request.connectCheck ? { connectCheck: this.request.connectCheck } : {}),
    });
    let failed: string | undefined;
    let buffered = '';
    for await (const chunk of progress) {
      buffered += (chunk as Buffer).toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        if (line.trim() === '') continue;
        try {
          const message = JSON.parse(line) as { error?: string };
          if (message.error) failed = message.error;
          else this.out.raw(line);
        } catch {
          // not JSON: not passed on
        }
      }
    }
    if (failed !== undefined) throw EngineError.notFound(failed);
  }

  /** Variables a stage's words expand with: its environment, then its ARGs the environment does not set. */
  #vars(state: StageState): Map<string, string> {
    const vars = new Map(state.args);
    for (const [k, v] of variablesOf(state.run.config.Env ?? [])) vars.set(k, v);
    return vars;
  }

  async #execute(state: StageState, instruction: DockerfileInstruction, trigger = false): Promise<void> {
    const { keyword } = instruction;
    if (keyword === 'arg') {
      for (const [name, value] of this.#argPairs(instruction, this.#vars(state), this.#meta)) state.args.set(name, value);
      await this.#commitConfig(state, `ARG ${instruction.args}`);
      return;
    }
    if (keyword === 'run') return this.#run(state, instruction);
    if (keyword === 'copy' || keyword === 'add') return this.#copy(state, instruction);
    if (!CONFIG_INSTRUCTIONS.has(keyword)) throw EngineError.invalidParameter(`${keyword.toUpperCase()} is not allowed here${trigger ? ' (ONBUILD trigger)' : ''}`);
    const text = applyConfigInstruction(state.run, keyword, instruction.args, this.#vars(state), this.escape);
    if (keyword === 'maintainer' && state.run.author !== undefined) state.blob.author = state.run.author;
    if (keyword === 'workdir') return this.#workdir(state, text);
    await this.#commitConfig(state, text);
  }

  /** A config-only step: a new image with the same layers and an `empty_layer` history entry. */
  async #commitConfig(state: StageState, text: string): Promise<void> {
    const createdBy = `/bin/sh -c #(nop)  ${text}`;
    await this.#commitStep(state, createdBy, '', async () => ({ layer: undefined }));
  }

  async #workdir(state: StageState, text: string): Promise<void> {
    const dir = state.run.config.WorkingDir as string;
    const createdBy = `/bin/sh -c #(nop) ${text}`;
    await this.#commitStep(state, createdBy, '', async () => {
      // The directory is made (root's, 0755) when the image lacks it, as dockerd's WORKDIR does.
      const root = state.imageId === '' ? undefined : await this.backend.store.imageRootfs(await this.#ensureImage(state));
      const parts = dir.split('/').filter(Boolean);
      const entries = [];
      for (let i = 1; i <= parts.length; i++) {
        const rel = parts.slice(0, i).join('/');
        const exists = root ? await lstat(await resolveInRoot(root, rel)).then(() => true, () => false) : false;
        if (!exists) entries.push({ header: { name: `${rel}/`, type: 'directory' as const, mode: 0o755, uid: 0, gid: 0, mtime: new Date() } });
      }
      return { layer: entries.length > 0 ? await this.backend.store.storeLayer(entries) : undefined };
    });
  }

  async #run(state: StageState, instruction: DockerfileInstruction): Promise<void> {
    const form = commandForm(instruction.args);
    const cmd = 'exec' in form ? form.exec : [...state.run.shell, form.shell];
    const env = [...(state.run.config.Env ?? [])];
    const envNames = new Set(env.map((e) => e.split('=')[0]));
    const args = [...state.args].filter(([k]) => !envNames.has(k)).sort(([a], [b]) => a.localeCompare(b));
    // dockerd's history (and cache key) of a RUN with build args: `|N a=1 b=2 <command>`.
    const prefix = args.length > 0 ? `|${args.length} ${args.map(([k, v]) => `${k}=${v}`).join(' ')} ` : '';
    const createdBy = `${prefix}${cmd.join(' ')}`;
    // The predefined proxy ARGs reach RUN without a declaration, and stay out of the history (dockerd's rule).
    const proxies = PREDEFINED_ARGS.filter((k) => !state.args.has(k) && !envNames.has(k) && typeof this.request.buildArgs[k] === 'string').map((k) => `${k}=${this.request.buildArgs[k] as string}`);
    const hostConfig = { ...this.request.hostConfig, ...(this.request.networkMode ? { NetworkMode: this.request.networkMode } : {}) };
    // What the RUN sees beyond its text: dockerd leaves the proxies out of the key; a step built
    // through one proxy (or network, or hosts) is not the same step through another.
    const seen = JSON.stringify({ proxies, hostConfig: Object.entries(hostConfig).sort(([a], [b]) => a.localeCompare(b)) });
    await this.#commitStep(state, createdBy, seen, async () => {
      const imageId = await this.#ensureImage(state);
      const { runtime } = this.backend;
      const config = state.run.config;
      const body: ContainerCreateBody = {
        Image: imageId,
        Cmd: cmd,
        Entrypoint: [''],
        Env: [...env, ...args.map(([k, v]) => `${k}=${v}`), ...proxies],
        ...(config.WorkingDir ? { WorkingDir: config.WorkingDir } : {}),
        ...(config.User ? { User: config.User } : {}),
        Labels: this.request.containerLabels,
        AttachStdout: true,
        AttachStderr: true,
        HostConfig: hostConfig,
      };
      refuseUnsupportedFields(body, runtime.createFields, runtime.name ?? 'custom');
      // The query's HostConfig as the router decoded it once (runSpec), the step's own fields decoded here.
      const { runSpec } = this.request;
      const spec = runSpec ? { ...containerSpecOf({ ...body, HostConfig: {} }), host: runSpec.host, raw: body } : containerSpecOf(body);
      const created = await runtime.create({ apiVersion: this.request.apiVersion, spec, body });
      const id = created.id;
      this.#containers.add(id);
      this.out.text(` ---> Running in ${short(id)}\n`);
      const session = await runtime.attach(id, { stdin: false, stdout: true, stderr: true, logs: true, stream: true });
      const waiting = await runtime.wait(id, 'next-exit', this.request.signal);
      const abort = () => void runtime.kill?.(id, 'SIGKILL').catch(() => undefined);
      this.request.signal.addEventListener('abort', abort);
      const copying = this.#relay(session.stream, session.multiplexed);
      try {
        await runtime.start(id);
        const result = await waiting.result;
        await copying;
        if (result.StatusCode !== 0) {
          // As dockerd: the failed step's container stays for the user to inspect, unless forcerm removes it (and says so).
          if (this.request.forcerm) {
            await runtime.remove(id, { force: true, volumes: true });
            this.out.text(`Removing intermediate container ${short(id)}\n`);
          }
          this.#containers.delete(id);
          throw Object.assign(new Error(`The command '${cmd.join(' ')}' returned a non-zero code: ${result.StatusCode}`), { exitCode: result.StatusCode });
        }
      } finally {
        this.request.signal.removeEventListener('abort', abort);
        session.stream.destroy();
      }
      const layer = await this.backend.containerLayer(id);
      if (this.request.rm) {
        await runtime.remove(id, { force: true, volumes: true });
        this.out.text(`Removing intermediate container ${short(id)}\n`);
      }
      this.#containers.delete(id);
      return { layer };
    });
  }

  async #relay(stream: Readable, multiplexed: boolean): Promise<void> {
    const decoder = multiplexed ? new FrameDecoder() : undefined;
    try {
      for await (const chunk of stream) {
        if (!decoder) {
          this.out.text((chunk as Buffer).toString());
          continue;
        }
        // dockerd's builder writes each stderr chunk between the ANSI codes for bright red and reset.
        for (const frame of decoder.push(chunk as Buffer)) this.out.text(frame.stream === STREAM_STDERR ? `\x1b[91m${frame.payload.toString()}\x1b[0m` : frame.payload.toString());
      }
    } catch {
      // The stream ends when the container is removed; its output so far was relayed.
    }
  }

  async #copy(state: StageState, instruction: DockerfileInstruction): Promise<void> {
    const keyword = instruction.keyword === 'add' ? 'ADD' : 'COPY';
    const { flags, rest } = splitFlags(instruction.args, ['from', 'chown', 'chmod']);
    if (flags.has('chmod')) throw EngineError.invalidParameter(`${keyword} --chmod is not supported by the classic builder (dockerd 20.10 needs BuildKit for it)`);
    if (keyword === 'ADD' && flags.has('from')) throw EngineError.invalidParameter('ADD --from is not allowed: use COPY --from');
    const vars = this.#vars(state);
    const form = commandForm(rest);
    const words = 'exec' in form ? form.exec.map((w) => processWord(w, vars, this.escape)) : processWords(form.shell, vars, this.escape);
    if (words.length < 2) throw EngineError.invalidParameter(`${keyword} requires at least two arguments, but only one was provided. Destination could not be determined.`);
    const sources = words.slice(0, -1);
    const destWord = words[words.length - 1] as string;
    if (keyword === 'ADD') {
      const url = sources.find((s) => /^https?:\/\//i.test(s));
      if (url) throw EngineError.invalidParameter(`ADD ${url}: adding files from a URL is not supported by this builder (its builds have no outbound network); download the file into the build context and COPY it`);
    }
    const workdir = (state.run.config.WorkingDir as string | undefined) || '/';
    const dest = posix.isAbsolute(destWord) ? destWord : `${posix.join(workdir, destWord)}${destWord.endsWith('/') || destWord === '.' ? '/' : ''}`;
    // The unpacked parent is needed only to write the layer (and to resolve --chown names), not for a cache hit.
    const parentRoot = async () => (state.imageId === '' ? undefined : this.backend.store.imageRootfs(await this.#ensureImage(state)));
    let source: CopySource = { root: this.context.root, ignored: this.context.ignored, walkIgnored: this.context.walkIgnored, context: true };
    const from = flags.get('from');
    if (from !== undefined) {
      const stageImage = this.#stages.get(processWord(from, this.#meta, this.escape).toLowerCase());
      const imageId = stageImage ?? (await this.backend.store.resolve(from))?.id;
      if (!imageId) throw EngineError.notFound(`COPY --from=${from}: no stage or image by that name (No such image: ${from})`);
      if (stageImage === undefined) await this.request.checkImage?.(from, imageId);
      source = { root: await this.backend.store.imageRootfs(imageId), ignored: () => false, context: false };
    }
    const chownSpec = flags.get('chown');
    const chownUser = chownSpec === undefined ? undefined : processWord(chownSpec, vars, this.escape);
    const chown = chownUser === undefined ? undefined : await this.backend.resolveUser(/^\d+(:\d+)?$/.test(chownUser) ? undefined : await parentRoot(), chownUser);
    const scratch = await mkdtemp(join(this.backend.tempDir, 'add-'));
    try {
      let archives = 0;
      const plan = await copyEntries({
        source, sources, dest, keyword, ...(chown ? { chown } : {}),
        ...(keyword === 'ADD' ? { expandArchive: async (file: string) => ((await isArchive(file)) ? extractArchive(file, join(scratch, String(archives++))) : undefined) } : {}),
      });
      const createdBy = `/bin/sh -c #(nop) ${keyword} ${plan.digest} in ${destWord} `;
      await this.#commitStep(state, createdBy, plan.digest, async () => ({ layer: await this.backend.store.storeLayer(await withParents(plan, await parentRoot())) }));
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }

  /**
   * One step: a cache hit (` ---> Using cache`) or the work, then the new image; every step's
   * image is committed (it is the next step's parent and the cache's entry).
   */
  async #commitStep(state: StageState, createdBy: string, extra: string, work: () => Promise<{ layer: StoredLayer | undefined }>): Promise<void> {
    const parent = await this.#ensureImage(state);
    // The RUN containers' labels name the caller under a policy (dockgate.owner): one cache per owner.
    const owner = JSON.stringify(Object.entries(this.request.containerLabels).sort(([a], [b]) => a.localeCompare(b)));
    const key = BuildCache.key(owner, parent, `${createdBy}\n${JSON.stringify(state.run.config)}`, extra);
    const hit = this.request.nocache ? undefined : this.cache.get(key);
    const cached = hit && (!this.#allowedCache || this.#allowedCache.has(hit)) ? await this.backend.store.config(hit).catch(() => undefined) : undefined;
    if (hit && cached) {
      this.out.text(' ---> Using cache\n');
      this.#adopt(state, hit, cached);
      this.out.text(` ---> ${short(hit)}\n`);
      return;
    }
    const { layer } = await work();
    const blob = state.blob;
    const entry: ImageHistoryEntry = { created: new Date().toISOString(), created_by: createdBy, ...(layer ? {} : { empty_layer: true }) };
    blob.created = entry.created as string;
    blob.history = [...(blob.history ?? []), entry];
    if (layer) blob.rootfs = { type: 'layers', diff_ids: [...blob.rootfs.diff_ids, layer.diffId] };
    blob.config = state.run.config;
    const id = await this.backend.store.createImage(blob, [], parent);
    await this.cache.put(key, parent, id);
    state.imageId = id;
    this.out.text(` ---> ${short(id)}\n`);
  }

  #adopt(state: StageState, id: string, config: ImageConfigBlob): void {
    const blob = structuredClone(config);
    blob.config = blob.config ?? {};
    state.imageId = id;
    state.blob = blob;
    state.run.config = blob.config;
  }

  /** The stage's image so far (a scratch stage with no step yet gets its empty image). */
  async #ensureImage(state: StageState): Promise<string> {
    if (state.imageId === '') {
      state.blob.config = state.run.config;
      state.imageId = await this.backend.store.createImage(state.blob);
    }
    return state.imageId;
  }
}

/** Whether ADD auto-extracts the file: a tar, plain or gzip (dockerd also reads bzip2 and xz). */
async function isArchive(file: string): Promise<boolean> {
  const handle = await open(file, 'r');
  try {
    const head = Buffer.alloc(262);
    const { bytesRead } = await handle.read(head, 0, 262, 0);
    if (bytesRead >= 2 && head[0] === 0x1f && head[1] === 0x8b) return true;
    if (bytesRead >= 3 && head.subarray(0, 3).toString('latin1') === 'BZh') throw EngineError.invalidParameter('ADD: bzip2 archives are not extracted by this builder (use a .tar or .tar.gz)');
    if (bytesRead >= 6 && head.subarray(0, 6).equals(Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]))) throw EngineError.invalidParameter('ADD: xz archives are not extracted by this builder (use a .tar or .tar.gz)');
    return bytesRead >= 262 && head.subarray(257, 262).toString('latin1') === 'ustar';
  } finally {
    await handle.close();
  }
}

async function extractArchive(file: string, dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  await applyLayer(dir, await decompressedLayer(createReadStream(file)));
  return dir;
}
