import type { ContainerSpec, HostSpec } from '../../engine-api/container-spec.js';
import { defaultAdmin, type AdminPredicate } from './admin-predicate.js';
import { isCollectionAction } from './engine-actions.js';
import { CONTAINER_REFERENCES } from './container-references.js';
import { OWNER_LABEL } from './owner-label.js';
import { imageVisible } from './image-visibility.js';
import { JOINS_NETWORKS, foreignJoinedNetwork } from './joined-networks.js';
import { allow, hide, refuse, type EnginePolicy, type ImageShown, type ImageTarget, type NetworkTarget, type PolicyDecision, type PolicyRequest } from './policy-types.js';

/** Options of {@link ownershipPolicy}. */
export interface OwnershipPolicyOptions {
  /** Who administers: administrators see and act on every container. Defaults to holders of an `engine:api:admin` grant. */
  admin?: AdminPredicate;
  /**
   * Namespaces whose images every tenant sees, besides the names no tenant can write (`busybox`,
   * `library/…`), e.g. `['myorg']` for the administrators' `myorg/…` images. A subject of the
   * same name would write there: list only namespaces no subject is named after. Defaults to none.
   */
  sharedNamespaces?: string[];
}

/** The actions whose answer shows or uses images the request does not name in its path. */
const SHOWS_IMAGES = new Set(['image.list', 'image.save', 'system.df', 'image.build']);
const NONE: ReadonlySet<string> = new Set();

/** Named volumes a create mounts: `-v NAME:/path` and `--mount type=volume,src=NAME`. */
function namedVolumes(host: HostSpec): { field: string; name: string }[] {
  const out: { field: string; name: string }[] = [];
  for (const { source } of host.binds) {
    if (source !== '' && !source.startsWith('/')) out.push({ field: 'HostConfig.Binds', name: source });
  }
  for (const m of host.mounts) {
    if ((m.type ?? 'volume') === 'volume' && m.source !== undefined && m.source !== '') out.push({ field: 'HostConfig.Mounts', name: m.source });
  }
  return out;
}

const OWNER_LABEL_REFUSAL = `Labels: the ${OWNER_LABEL} label is set by the engine`;

/** Whether a create's Labels name an owner other than the caller (the engine sets that label itself). */
function setsOwnerLabel(labels: unknown, subject: string): boolean {
  return typeof labels === 'object' && labels !== null && OWNER_LABEL in labels && (labels as Record<string, unknown>)[OWNER_LABEL] !== subject;
}

async function checkVolumeCreate(request: PolicyRequest, subject: string | undefined) {
  if (subject === undefined) return refuse('creating a volume needs a signed-in caller: volumes belong to the subject that creates them');
  if (setsOwnerLabel(request.body?.Labels, subject)) return refuse(OWNER_LABEL_REFUSAL);
  const name = request.body?.Name;
  if (typeof name === 'string' && name !== '') {
    const existing = await request.lookup.volume(name);
    // dockerd answers a create of an existing name with that volume: someone else's would be handed over.
    if (existing && existing.owner !== subject) return refuse(`volume name ${name} is taken`);
  }
  return allow();
}

/**
 * A container and its execs belong to the subject that created them. For anyone else they do
 * not exist: 404 `No such container: x` (dockerd's words), absent from `docker ps`, `events`,
 * `system df`, `info`'s counts and prune. A user-defined network is its creator's too: others'
 * are absent from `docker network ls` (which keeps the predefined bridge, host and none) and 404
 * `network x not found` to inspect, and an inspect shows in `Containers` only the caller's
 * containers. A create may not name another's container
 * (`--network container:x`, `--pid container:x`, `--volumes-from`, `--link`) nor set the owner
 * label. An image is seen by a tenant when one of its names is in the tenant's namespace or is
 * shared (`busybox`, `library/…`, `sharedNamespaces`), or one of its containers runs it; any
 * other is absent from `docker images`, `system df` and a build's FROM, and 404 `No such image: x`
 * to inspect, history, save, tag and create. Administrators (the `admin` predicate) see everything.
 *
 * @example
 * engineRouter(runtime, range, { policy: ownershipPolicy({ admin: adminPredicate({ subjects: ['root'] }) }) });
 */
export function ownershipPolicy(options: OwnershipPolicyOptions = {}): EnginePolicy {
  const admin = options.admin ?? defaultAdmin;
  if (typeof admin !== 'function') throw new TypeError('ownershipPolicy option "admin" must be a function (see adminPredicate)');
  const shared = options.sharedNamespaces ?? [];
  if (!Array.isArray(shared) || !shared.every((n) => typeof n === 'string' && /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/.test(n))) {
    throw new TypeError('ownershipPolicy option "sharedNamespaces" must be a list of repository namespaces (lower-case path components, e.g. "myorg")');
  }
  const sharedNamespaces: ReadonlySet<string> = new Set(shared);
  return async (request) => {
    const { caller, target, action } = request;
    if (admin(caller)) return allow();
    const subject = caller.subject;
    // The images the subject's containers run, asked once per request and only when needed.
    let used: Promise<ReadonlySet<string>> | undefined;
    const showImage: ImageShown = async (image) => {
      if (imageVisible(image, subject, sharedNamespaces, NONE)) return true;
      used ??= subject === undefined ? Promise.resolve(NONE) : request.lookup.containerImages(subject);
      return imageVisible(image, subject, sharedNamespaces, await used);
    };
    if (SHOWS_IMAGES.has(action)) {
      const decision = await ownershipDecision(request, subject);
      return decision.allow ? { ...decision, showImage } : decision;
    }
    if (target?.kind === 'image' && target.id !== undefined) {
      if (!(await showImage(imageRow(target)))) return hide();
    }
    if (action === 'container.create') {
      const image = request.spec?.image ?? '';
      const found = image !== '' ? await request.lookup.image(image) : undefined;
      // Another owner's image reads as one that does not exist: 404 `No such image`.
      if (found?.id !== undefined && !(await showImage(imageRow(found)))) return hide();
    }
    return ownershipDecision(request, subject);
  };
}

/** The ownership rules for a caller who does not administer. */
async function ownershipDecision(request: PolicyRequest, subject: string | undefined): Promise<PolicyDecision> {
  const { target, action } = request;
  if (isCollectionAction(action)) return allow(subject ?? '');
  if (target?.kind === 'container') {
    // A reference naming nothing is left to the route, which answers its own 404.
    if (target.id === undefined) return allow();
    if (subject === undefined || target.owner !== subject) return hide();
    // A network made after the create by another tenant, of a name the container joins: absent for it.
    if (JOINS_NETWORKS.has(action)) return (await foreignJoinedNetwork(request, subject)) ?? allow();
    // Narrowed: a name another owner's container holds is "in use", without its id.
    return action === 'container.rename' ? allow(subject) : allow();
  }
  if (target?.kind === 'volume') {
    if (!target.exists) return allow();
    // Narrowed: a volume another owner's container mounts is "in use", without its id.
    return subject !== undefined && target.owner === subject ? allow(action === 'volume.delete' ? subject : undefined) : hide();
  }
  if (target?.kind === 'exec') return target.containerId !== undefined && subject !== undefined && target.owner === subject ? allow() : hide();
  if (action === 'container.create') return checkCreate(request, subject);
  // A build's RUN steps are containers: they belong to the caller, who must be known.
  if (action === 'image.build' && subject === undefined) return refuse('building an image needs a signed-in caller: its RUN containers belong to the subject that builds');
  if (target?.kind === 'network') return checkNetworkTarget(request, subject, target);
  if (action === 'volume.create') return checkVolumeCreate(request, subject);
  // Narrowed: an image another owner's container uses is "in use", without that container's id.
  if (action === 'image.delete') return allow(subject ?? '');
  if (action === 'network.create') return checkNetworkCreate(request, subject);
  return allow();
}

async function checkCreate(request: PolicyRequest, subject: string | undefined) {
  if (subject === undefined) return refuse('creating a container needs a signed-in caller: containers belong to the subject that creates them');
  const { spec } = request;
  if (!spec) return allow(subject);
  if (setsOwnerLabel(spec.labels, subject)) return refuse(OWNER_LABEL_REFUSAL);
  // The labels of a volume a mount makes: its owner is the engine's to say, as at volume create.
  if (spec.host.mounts.some((m) => setsOwnerLabel((m.options.VolumeOptions as { Labels?: unknown } | undefined)?.Labels, subject))) {
    return refuse(`HostConfig.Mounts.VolumeOptions.${OWNER_LABEL_REFUSAL}`);
  }
  for (const { field, name } of namedVolumes(spec.host)) {
    const volume = await request.lookup.volume(name);
    if (volume === null) break; // a runtime without volumes: nothing to own
    // A volume made on the fly by the runtime would belong to nobody: a tenant creates it first.
    if (!volume) return refuse(`${field}: No such volume: ${name} (create it first with docker volume create ${name}, so that it is yours)`);
    if (volume.owner !== subject) return refuse(`${field}: No such volume: ${name}`);
  }
  // A user-defined network is its creator's: another's reads as one that does not exist.
  for (const { field, name } of networksNamed(spec)) {
    const network = await request.lookup.network(name);
    if (network === null || network === undefined || network.predefined) continue;
    if (network.owner !== subject) return refuse(`${field}: network ${name} not found`);
  }
  for (const { field, refs } of CONTAINER_REFERENCES) {
    for (const ref of refs(spec)) {
      const found = await request.lookup.container(ref);
      // Someone else's container and none at all read the same, so this leaks nothing.
      if (!found || found.owner !== subject) return refuse(`${field}: No such container: ${ref}`);
    }
  }
  // Legacy links on a network (`EndpointConfig.Links`) name containers too.
  for (const config of Object.values(spec.networks)) {
    const refused = await foreignLink(request, subject, config, 'NetworkingConfig.EndpointsConfig.Links');
    if (refused) return refused;
  }
  // Narrowed: a name another owner's container holds is "in use", without its id.
  return allow(subject);
}

/** A refusal when an endpoint config's `Links` names a container that is not the caller's (or none), as the other references are refused. */
async function foreignLink(request: PolicyRequest, subject: string, config: unknown, field: string) {
  const links = config && typeof config === 'object' ? (config as { Links?: unknown }).Links : undefined;
  for (const entry of Array.isArray(links) ? links : []) {
    const ref = typeof entry === 'string' ? entry.split(':')[0]!.replace(/^\//, '') : '';
    if (ref === '') continue;
    const found = await request.lookup.container(ref);
    if (!found || found.owner !== subject) return refuse(`${field}: No such container: ${ref}`);
  }
  return undefined;
}

/** The networks a create joins by name: its NetworkMode (a user network's) and its EndpointsConfig keys. */
function networksNamed(spec: ContainerSpec): { field: string; name: string }[] {
  const out: { field: string; name: string }[] = [];
  const mode = spec.host.networkMode;
  if (mode !== '' && !['default', 'bridge', 'host', 'none'].includes(mode) && !mode.startsWith('container:')) {
    out.push({ field: 'HostConfig.NetworkMode', name: mode });
  }
  for (const name of Object.keys(spec.networks)) out.push({ field: 'NetworkingConfig.EndpointsConfig', name });
  return out;
}

/** A network is created by a signed-in caller, who becomes its owner (the route sets the label). */
async function checkNetworkCreate(request: PolicyRequest, subject: string | undefined) {
  if (subject === undefined) return refuse('creating a network needs a signed-in caller: networks belong to the subject that creates them');
  if (setsOwnerLabel(request.body?.Labels, subject)) return refuse(OWNER_LABEL_REFUSAL);
  return allow();
}

/**
 * Inspecting, removing, connecting and disconnecting: the network must be the caller's (another's is hidden,
 * a predefined one is the runtime's business), and the container connected or disconnected too.
 */
async function checkNetworkTarget(request: PolicyRequest, subject: string | undefined, target: NetworkTarget) {
  if (!target.exists) return allow();
  if (!target.predefined && (subject === undefined || target.owner !== subject)) return hide();
  // A predefined network is everyone's: its inspect lists the caller's containers on it only.
  if (request.action === 'network.inspect') return allow(subject ?? '');
  if (request.action === 'network.connect' || request.action === 'network.disconnect') {
    const ref = request.body?.Container;
    if (typeof ref === 'string' && ref !== '') {
      const found = await request.lookup.container(ref);
      if (!found || found.owner !== subject) return refuse(`Container: No such container: ${ref}`);
    }
    const refused = subject === undefined ? undefined : await foreignLink(request, subject, request.body?.EndpointConfig, 'EndpointConfig.Links');
    if (refused) return refused;
  }
  return allow();
}

/** An image target as the row {@link imageVisible} reads: its id, names and owner label. */
function imageRow(target: ImageTarget): Record<string, unknown> {
  return { Id: target.id, RepoTags: target.repoTags ?? [], RepoDigests: target.repoDigests ?? [], ...(target.owner !== undefined ? { Labels: { [OWNER_LABEL]: target.owner } } : {}) };
}
