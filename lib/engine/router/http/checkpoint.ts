import type { Request } from 'express';
import type { LoadNameCheck } from '../../../engine-api/image-operations.js';
import type { ConnectCheck } from '../../../http/checked-fetch.js';
import { EngineError } from '../../../engine-api/engine-error.js';
import type { ContainerSpec } from '../../../engine-api/container-spec.js';
import type { BuildSpec } from '../../../engine-api/build-operations.js';
import { withGoFieldCase } from '../../../engine-api/go-field-case.js';
import type { ExecSpec } from '../../../engine-api/exec-spec.js';
import { parsePullReference } from '../../../engine-api/pull-reference.js';
import type { EngineFilters } from '../../../engine-api/filters.js';
import { isPredefinedNetwork } from '../../../engine-api/network-operations.js';
import { queryString } from './query.js';
import { idPrefixOf } from '../../images/store/references.js';
import { ENGINE_ACTIONS, type EngineAction } from '../../policy/engine-actions.js';
import { ANONYMOUS_CALLER, callerFromBearer } from '../../policy/engine-caller.js';
import { inNamespace } from '../../policy/image-namespace.js';
import { OWNER_LABEL, ownerOf } from '../../policy/owner-label.js';
import { pinContainerReferences } from '../../policy/container-references.js';
import { networksJoined } from './joined-networks-of.js';
import type { ContainerTarget, EngineCaller, ImageShown, ImageTarget, ImportSource, NetworkTarget, PolicyDecision, PolicyLookup, PolicyTarget, VolumeTarget } from '../../policy/policy-types.js';
import type { EngineContext } from './engine-context.js';
import { importSource } from './import-source.js';
import { readJsonBody } from './read-json-body.js';

/** Actions whose JSON body the policy sees: read once here, and handed to the route. */
const BODY_ACTIONS: ReadonlySet<EngineAction> = new Set(['container.update', 'volume.create', 'network.create', 'network.connect', 'network.disconnect']);

/** What the checkpoint leaves for the route, in `res.locals.engine.policy`. */
export interface CheckpointResult {
  caller: EngineCaller;
  /** Set when the policy narrowed a collection action to one owner's containers. */
  onlyOwner?: string;
  /** Default capabilities the created container (or a build's RUN containers) goes without unless its CapAdd names them. */
  withoutCapabilities?: readonly string[];
  /** `container.create`: the decoded spec with the container references the policy looked up pinned to their ids. */
  spec?: ContainerSpec;
  /** The JSON body, when the checkpoint read it (`{ value }`, so that an empty body reads as undefined). */
  body?: { value: unknown };
  /**
   * `docker load`: asks the policy again with the names the loader parsed (the route hands it to
   * the runtime); throws the 403 of a refusal.
   */
  checkNames?: LoadNameCheck;
  /** `docker build`: asks the policy about a FROM pull as `image.pull` (the route hands it to the runtime). */
  checkPull?: (ref: string) => Promise<void>;
  /** Pull, push, build and login: the check each registry connection passes (the route hands it to the runtime). */
  connectCheck?: ConnectCheck;
  /** List, save, system df and build: the images the caller sees (the others are left out, or 404 when named). */
  showImage?: ImageShown;
  /** `docker build`: throws `No such image: <ref>` when the local image a FROM or `COPY --from` resolved to is one the caller does not see (the route hands it to the runtime). */
  checkImage?: (ref: string, id: string) => Promise<void>;
}

/**
 * The policy checkpoint in front of every route (`engineRoute` calls it after the version gate):
 * who calls, what the action acts on (resolved through the runtime), a create's typed spec (decoded by the route chain) and
 * the image names written; then the policy. A refusal is a 403 `{"message"}`, a hidden target a
 * 404 in dockerd's words, both through the engine's one error writer.
 */
export async function checkpoint(ctx: EngineContext, action: EngineAction, req: Request, version: string, decoded: { spec?: ContainerSpec; execSpec?: ExecSpec; buildSpec?: BuildSpec } = {}): Promise<CheckpointResult | undefined> {
  const { policy } = ctx.settings;
  if (!policy) return undefined;
  const caller = (await (ctx.settings.caller ?? callerFromBearer)(req)) ?? ANONYMOUS_CALLER;
  /** Each container reference the policy looked up, with the id it named then. */
  const containerIds = new Map<string, string>();
  const lookup = policyLookup(ctx, version, containerIds);
  const result: CheckpointResult = { caller };
  const target = await resolveTarget(ctx, action, req, version, lookup);
  let body: Record<string, unknown> | undefined;
  if (BODY_ACTIONS.has(action)) {
    // Keys in any case, as dockerd's decoder takes them: the policy and the route read one spelling.
    const value = withGoFieldCase(await readJsonBody(req, ctx.settings.maxBodyBytes));
    result.body = { value };
    if (value && typeof value === 'object' && !Array.isArray(value)) body = value as Record<string, unknown>;
  }
  // A build's RUN containers: the policy judges their HostConfig (networkmode, limits) as a create's.
  const spec = action === 'image.build' ? decoded.buildSpec?.run : decoded.spec;
  const { execSpec } = decoded;
  const source = action === 'image.import' ? importSourceOf(req) : undefined;
  const images = imagesWritten(action, req, target);
  const ask = async (written: readonly string[] | undefined): Promise<void> => {
    const decision = await policy({
      action, caller, lookup, runtime: ctx.runtime.name ?? 'custom',
      ...(target ? { target } : {}), ...(body ? { body } : {}), ...(spec ? { spec } : {}), ...(execSpec ? { exec: execSpec } : {}), ...(written ? { images: written } : {}), ...(source ? { source } : {}),
    });
    if (!decision.allow) throw refusalError(decision, action, target, spec);
    if (decision.onlyOwner !== undefined) result.onlyOwner = decision.onlyOwner;
    if (decision.withoutCapabilities !== undefined) result.withoutCapabilities = decision.withoutCapabilities;
    if (decision.connectCheck !== undefined) result.connectCheck = decision.connectCheck;
    if (decision.showImage !== undefined) result.showImage = decision.showImage;
    // The create is handed the containers the policy checked (`container:<id>`, `<id>:ro`), so the
    // runtime cannot resolve a name or prefix to another one meanwhile (one removed, another made).
    if (action === 'container.create' && spec) result.spec = pinContainerReferences(spec, containerIds);
  };
  await ask(images);
  // A load's names are known once the loader has parsed its archive: it asks again with them,
  // before any tag is written (one parse decides what is judged and what is written).
  if (action === 'image.load') result.checkNames = (names) => ask(names);
  // A build's FROM pull is `docker pull` (image.pull) of that reference, judged the same way.
  const { showImage } = result;
  if (action === 'image.build' && showImage && ctx.runtime.inspectImage) {
    const inspectImage = ctx.runtime.inspectImage.bind(ctx.runtime);
    result.checkImage = async (ref, id) => {
      const image = await notFoundAsUndefined(inspectImage(id, version));
      if (!image || !(await showImage(image))) throw EngineError.notFound(`No such image: ${ref}`);
    };
  }
  if (action === 'image.build') {
    result.checkPull = async (ref) => {
      const decision = await policy({ action: 'image.pull', caller, lookup, runtime: ctx.runtime.name ?? 'custom', images: [ref] });
      if (!decision.allow) throw new EngineError('Forbidden', 'hidden' in decision ? `pulling ${ref} is refused` : decision.message);
    };
  }
  return result;
}

/** `filters` with the owner's label added (dockerd ANDs label filters), when the policy narrowed the request. */
export function ownedFilters(filters: EngineFilters, onlyOwner: string | undefined): EngineFilters {
  if (onlyOwner === undefined) return filters;
  const out = new Map(filters);
  out.set('label', new Set([...(filters.get('label') ?? []), `${OWNER_LABEL}=${onlyOwner}`]));
  return out;
}

/** Whether a row (a list entry, an inspect body) is visible under the narrowing. */
export function visibleTo(onlyOwner: string | undefined, labels: unknown): boolean {
  return onlyOwner === undefined || ownerOf(labels) === onlyOwner;
}

/** The image rows (a list's, `system df`'s) the caller sees: all of them when the policy did not narrow images. */
export async function shownImages<T extends Record<string, unknown>>(images: T[], showImage: ImageShown | undefined): Promise<T[]> {
  if (!showImage) return images;
  const shown = await Promise.all(images.map((i) => showImage(i)));
  return images.filter((_, i) => shown[i]);
}

function refusalError(decision: PolicyDecision & { allow: false }, action: EngineAction, target: PolicyTarget | undefined, spec: ContainerSpec | undefined): EngineError {
  if ('hidden' in decision) return hiddenError(action, target, spec);
  return decision.notFound ? EngineError.notFound(decision.message) : new EngineError('Forbidden', decision.message);
}

function hiddenError(action: EngineAction, target: PolicyTarget | undefined, spec: ContainerSpec | undefined): EngineError {
  // A create from an image the caller may not see: as from one that does not exist.
  if (action === 'container.create') return EngineError.notFound(`No such image: ${spec?.image ?? ''}`);
  const ref = target?.ref ?? '';
  if (target?.kind === 'exec') return EngineError.notFound(`No such exec instance: ${ref}`);
  if (target?.kind === 'image') return EngineError.notFound(`No such image: ${ref}`);
  if (target?.kind === 'volume') return EngineError.notFound(`get ${ref}: no such volume`);
  if (target?.kind === 'network') return EngineError.notFound(`network ${ref} not found`);
  // dockerd's kill alone wraps the lookup failure (daemon/kill.go).
  if (action === 'container.kill') return EngineError.notFound(`Cannot kill container: ${ref}: No such container: ${ref}`);
  return EngineError.notFound(`No such container: ${ref}`);
}

async function resolveTarget(ctx: EngineContext, action: EngineAction, req: Request, version: string, lookup: PolicyLookup): Promise<PolicyTarget | undefined> {
  const params = req.params as Record<string, string | undefined>;
  switch (ENGINE_ACTIONS[action].target) {
    case 'container': {
      // `POST /commit` names its container in the query.
      const ref = params.id ?? (action === 'container.commit' ? queryString(req.query.container) ?? '' : '');
      // A commit naming no container has nothing to resolve (the route answers its own 404).
      if (ref === '') return { kind: 'container', ref };
      return (await lookup.container(ref)) ?? { kind: 'container', ref };
    }
    case 'exec': {
      const ref = params.id ?? '';
      const exec = ctx.runtime.inspectExec ? await notFoundAsUndefined(ctx.runtime.inspectExec(ref, version)) : undefined;
      const containerId = typeof exec?.ContainerID === 'string' ? exec.ContainerID : undefined;
      const container = containerId ? await lookup.container(containerId) : undefined;
      return { kind: 'exec', ref, ...(container?.id ? { containerId: container.id } : {}), ...(container?.owner !== undefined ? { owner: container.owner } : {}) };
    }
    case 'image': {
      const ref = params[0] ?? '';
      return (await lookup.image(ref)) ?? { kind: 'image', ref };
    }
    case 'volume': {
      const ref = params.name ?? '';
      return (await lookup.volume(ref)) ?? { kind: 'volume', ref, exists: false };
    }
    case 'network': {
      const ref = params.id ?? '';
      return (await lookup.network(ref)) ?? { kind: 'network', ref, exists: false };
    }
    default:
      return undefined;
  }
}

/**
 * The image names an action writes or removes; malformed input is left to the route's own 400.
 * A load's are left to its loader (`checkNames`): the first question has none.
 */
function imagesWritten(action: EngineAction, req: Request, target: PolicyTarget | undefined): string[] | undefined {
  const parsed = (name: string | undefined, tag?: string): string[] => {
    if (name === undefined || name.trim() === '') return [];
    try {
      return [parsePullReference(name, tag).ref];
    } catch {
      return [];
    }
  };
  switch (action) {
    case 'image.pull':
      return parsed(queryString(req.query.fromImage), queryString(req.query.tag));
    case 'image.tag':
    case 'image.import':
      return parsed(queryString(req.query.repo), queryString(req.query.tag));
    case 'image.push':
      // A push writes the name at the registry: the policy judges it as a tag it would write.
      return parsed(target?.ref, queryString(req.query.tag));
    case 'container.commit':
      return parsed(queryString(req.query.repo), queryString(req.query.tag));
    case 'image.build': {
      const tags = Array.isArray(req.query.t) ? req.query.t : req.query.t === undefined ? [] : [req.query.t];
      return tags.flatMap((t) => parsed(String(t)));
    }
    case 'image.delete': {
      const ref = target?.ref ?? '';
      // An id (or id prefix) names the image, not one of its tags: the policy sees its tags instead.
      if (ref.startsWith('sha256:') || idPrefixOf(ref) !== undefined) return [];
      return parsed(ref);
    }
    default:
      return undefined;
  }
}

/** Where `docker import` reads from, as the route will; malformed `fromSrc` is left to the route's own 400. */
function importSourceOf(req: Request): ImportSource | undefined {
  const fromSrc = queryString(req.query.fromSrc);
  if (fromSrc === undefined) return undefined;
  try {
    return importSource(fromSrc);
  } catch {
    return undefined;
  }
}

async function notFoundAsUndefined<T>(promise: Promise<T>): Promise<T | undefined> {
  try {
    return await promise;
  } catch (error) {
    if (error instanceof EngineError && error.kind === 'NotFound') return undefined;
    throw error;
  }
}

function policyLookup(ctx: EngineContext, version: string, containerIds: Map<string, string>): PolicyLookup {
  const { runtime } = ctx;
  return {
    async container(ref: string): Promise<ContainerTarget | undefined> {
      const found = await notFoundAsUndefined(runtime.inspect(ref));
      if (!found || typeof found.Id !== 'string') return undefined;
      if (!containerIds.has(ref)) containerIds.set(ref, found.Id);
      const owner = ownerOf((found.Config as { Labels?: unknown } | undefined)?.Labels);
      return { kind: 'container', ref, id: found.Id, ...(owner !== undefined ? { owner } : {}), networks: networksJoined(found) };
    },
    async volume(name: string): Promise<VolumeTarget | undefined | null> {
      if (!runtime.inspectVolume) return null;
      const found = await notFoundAsUndefined(runtime.inspectVolume(name, version));
      if (!found) return undefined;
      const owner = ownerOf(found.Labels);
      return { kind: 'volume', ref: name, exists: true, ...(owner !== undefined ? { owner } : {}) };
    },
    async network(ref: string): Promise<NetworkTarget | undefined | null> {
      if (!runtime.inspectNetwork) return null;
      const found = await notFoundAsUndefined(runtime.inspectNetwork(ref, { verbose: false, apiVersion: version }));
      if (!found) return undefined;
      const owner = ownerOf(found.Labels);
      const predefined = isPredefinedNetwork(found.Name);
      return { kind: 'network', ref, exists: true, ...(typeof found.Id === 'string' ? { id: found.Id } : {}), ...(predefined ? { predefined } : {}), ...(owner !== undefined ? { owner } : {}) };
    },
    async containerCount(owner: string): Promise<number> {
      const rows = await runtime.list({ all: true, filters: new Map([['label', new Set([`${OWNER_LABEL}=${owner}`])]]) });
      return rows.length;
    },
    async image(ref: string): Promise<ImageTarget | undefined | null> {
      if (!runtime.inspectImage) return null;
      const image = await notFoundAsUndefined(runtime.inspectImage(ref, version));
      if (!image) return undefined;
      const strings = (field: unknown) => (Array.isArray(field) ? field.filter((t): t is string => typeof t === 'string') : undefined);
      const tags = strings(image.RepoTags);
      const digests = strings(image.RepoDigests);
      const config = image.Config as { Labels?: unknown } | null | undefined;
      const owner = ownerOf(config?.Labels);
      return {
        kind: 'image', ref, ...(typeof image.Id === 'string' ? { id: image.Id } : {}), ...(tags ? { repoTags: tags } : {}), ...(digests ? { repoDigests: digests } : {}),
        ...(owner !== undefined ? { owner } : {}),
      };
    },
    async containerImages(owner: string): Promise<ReadonlySet<string>> {
      const rows = await runtime.list({ all: true, filters: new Map([['label', new Set([`${OWNER_LABEL}=${owner}`])]]) });
      return new Set(rows.map((r) => (typeof r.ImageID === 'string' ? r.ImageID.replace(/^sha256:/, '') : '')).filter((id) => id !== ''));
    },
    async imageBytes(owner: string): Promise<number> {
      if (!runtime.listImages) return 0;
      const images = await runtime.listImages({ all: false, filters: new Map(), digests: false, sharedSize: false, apiVersion: version });
      return images
        .filter((i) => Array.isArray(i.RepoTags) && (i.RepoTags as unknown[]).some((t) => typeof t === 'string' && inNamespace(t, owner)))
        .reduce((sum, i) => sum + (typeof i.Size === 'number' ? i.Size : 0), 0);
    },
  };
}

