import type { ContainerSpec } from '../../engine-api/container-spec.js';
import type { ExecSpec } from '../../engine-api/exec-spec.js';
import type { AccessEntry } from '../../scope/index.js';
import type { ConnectCheck } from '../../http/checked-fetch.js';
import type { EngineAction } from './engine-actions.js';

/**
 * Who is calling: from `req.bearer` when `requireBearer`/`bearerGuard` ran before the engine,
 * or from `engineRouter`'s `caller` option.
 */
export interface EngineCaller {
  /** The account (`sub`), or undefined for a caller nobody signed in (anonymous). */
  readonly subject?: string;
  /** Every claim of the caller's token (or what the host's `caller` function gave). */
  readonly claims: Readonly<Record<string, unknown>>;
  /** The token's `access` grants (empty without a token). */
  readonly access: readonly AccessEntry[];
}

/** The container a request acts on, as the checkpoint resolved it. */
export interface ContainerTarget {
  readonly kind: 'container';
  /** The reference the client sent (id, id prefix or name). */
  readonly ref: string;
  /** The full id, or undefined when no such container exists (the route answers 404 itself). */
  readonly id?: string;
  /** The subject that created it (its `dockgate.owner` label), undefined when none recorded. */
  readonly owner?: string;
  /**
   * The networks its start joins by name, as its record says (a user network's `NetworkMode` and
   * its endpoints' keys); a network of that name may have been made after the create.
   */
  readonly networks?: readonly string[];
}

/** The exec a request acts on, with the container it belongs to. */
export interface ExecTarget {
  readonly kind: 'exec';
  readonly ref: string;
  /** The exec's container, undefined when the exec does not exist. */
  readonly containerId?: string;
  /** That container's owner. */
  readonly owner?: string;
}

/** The image a request names in its path. */
export interface ImageTarget {
  readonly kind: 'image';
  /** The name or id as sent (`busybox`, `bob/app:1`, `sha256:…`). */
  readonly ref: string;
  /** The image's tags when it exists and the runtime can inspect images. */
  readonly repoTags?: readonly string[];
  /** Its repository digests (`bob/app@sha256:…`), when it exists. */
  readonly repoDigests?: readonly string[];
  /** Its id (`sha256:…`), when it exists; undefined for a reference naming no image (the route answers its own 404). */
  readonly id?: string;
  /** The owner label its config carries (`docker commit` keeps the container's labels), when it has one. */
  readonly owner?: string;
}

/** The named volume a request names in its path. */
export interface VolumeTarget {
  readonly kind: 'volume';
  readonly ref: string;
  /** Whether it exists (a missing one is left to the route's own 404). */
  readonly exists: boolean;
  /** The subject that created it (its `dockgate.owner` label). */
  readonly owner?: string;
}

/** The network a request names in its path (`GET` and `DELETE /networks/{id}`, connect, disconnect). */
export interface NetworkTarget {
  readonly kind: 'network';
  readonly ref: string;
  /** Whether it exists (a missing one is left to the route's own 404). */
  readonly exists: boolean;
  /** Its full id, when it exists. */
  readonly id?: string;
  /** Whether it is one of the predefined networks (`bridge`, `host`, `none`), which nobody owns. */
  readonly predefined?: boolean;
  /** The subject that created it (its `dockgate.owner` label). */
  readonly owner?: string;
}

export type PolicyTarget = ContainerTarget | ExecTarget | ImageTarget | VolumeTarget | NetworkTarget;

/**
 * Where `docker import` (`image.import`) reads its archive from, as `fromSrc` says: the request
 * body (`fromSrc=-`), or a URL the engine itself fetches, from the host's network.
 */
export type ImportSource =
  | { readonly kind: 'body' }
  | {
      readonly kind: 'url';
      /** The http(s) URL the engine would fetch, normalized (the WHATWG `href`: lower-case scheme and host). */
      readonly url: string;
    };

/** Read-only questions a policy may ask about the engine's state. */
export interface PolicyLookup {
  /** The container a reference names (id, prefix or name), or undefined when none. */
  container(ref: string): Promise<ContainerTarget | undefined>;
  /**
   * The named volume of that name, or undefined when none; `null` when the runtime has no
   * volumes at all (the local runtimes), so there is nothing to own.
   */
  volume(name: string): Promise<VolumeTarget | undefined | null>;
  /**
   * The network a reference names (name, id or id prefix), or undefined when none; `null` when
   * the runtime cannot inspect networks.
   */
  network(ref: string): Promise<NetworkTarget | undefined | null>;
  /** How many containers (any state) the subject owns. */
  containerCount(owner: string): Promise<number>;
  /** Bytes of the images that carry a tag under the subject's namespace (`bob/…`), as `docker images` sizes them. */
  imageBytes(owner: string): Promise<number>;
  /** The image a reference (name, id or id prefix) names, or undefined when none; `null` when the runtime cannot inspect images. */
  image(ref: string): Promise<ImageTarget | undefined | null>;
  /** The bare ids (hex, no `sha256:`) of the images the subject's containers (any state) run. */
  containerImages(owner: string): Promise<ReadonlySet<string>>;
}

/**
 * Whether the caller sees an image, given as a list row or an inspect body (`Id`, `RepoTags`,
 * `RepoDigests`); see `PolicyDecision.showImage`.
 */
export type ImageShown = (image: Readonly<Record<string, unknown>>) => Promise<boolean>;

/** What the policy is asked about one request. */
export interface PolicyRequest {
  readonly action: EngineAction;
  readonly caller: EngineCaller;
  /** The object of a targeted action (see `ENGINE_ACTIONS`), resolved. */
  readonly target?: PolicyTarget;
  /** The parsed JSON body of `container.update` and the volume and network creates and connects. */
  readonly body?: Readonly<Record<string, unknown>>;
  /**
   * `container.create`'s body, decoded once into the typed spec the runtime is handed (for
   * `image.build`, its RUN containers' HostConfig from the query, with an empty image). Absent
   * for a build whose query is malformed (the route answers that 400).
   */
  readonly spec?: ContainerSpec;
  /** `exec.create`'s body, decoded once into the typed spec the runtime is handed (its fields matched whatever their case). */
  readonly exec?: ExecSpec;
  /**
   * Image references the action would write or remove, in familiar form (`busybox:latest`,
   * `127.0.0.1:5000/bob/app:1`): the pull's target, the new tag, the reference being deleted.
   * `image.load` is asked twice: first without `images`, before the archive is read, then by the
   * loader with the names it parsed itself (possibly none), before any tag is written.
   */
  readonly images?: readonly string[];
  /**
   * `image.import`'s source (`fromSrc`). Absent when `fromSrc` is malformed (another scheme, not
   * a URL): the route answers that 400 itself and fetches nothing.
   */
  readonly source?: ImportSource;
  /** The runtime's name (`sandbox`, `process`, `docker`, `scripted`, or the host's). */
  readonly runtime: string;
  readonly lookup: PolicyLookup;
}

/**
 * A policy's answer. `allow` lets the request through; for a collection action `onlyOwner`
 * narrows it to that subject's containers (for `network.inspect`, the `Containers` it shows; for
 * `container.create` and `container.rename`, a name conflict with another owner's container is
 * answered without that container's id; for `volume.delete` and `image.delete`, so is an "in use"
 * conflict with another owner's container). `refuse` answers 403 with the message; `hide` answers
 * 404 as if the target did not exist (dockerd's words: `No such container: x`).
 */
export type PolicyDecision =
  | {
      readonly allow: true;
      readonly onlyOwner?: string;
      /**
       * For `container.create` and `image.build` (its RUN containers): capabilities of Docker's
       * default set the container goes without (added to its `CapDrop`) unless its `CapAdd`
       * names them, e.g. `NET_RAW` for a tenant.
       */
      readonly withoutCapabilities?: readonly string[];
      /**
       * For `image.pull`, `image.push`, `image.build` (its FROM pulls) and `system.auth`: asked
       * before each connection the runtime's registry client makes for the request (the
       * registry, every redirect, the token realm), with the address the host resolved to.
       */
      readonly connectCheck?: ConnectCheck;
      /**
       * For `image.list`, `image.save`, `system.df` and `image.build` (its FROM and `COPY --from`
       * images): the images the caller sees. The others are left out of lists, and naming one is
       * a 404 `No such image: x`, as for an image that does not exist.
       */
      readonly showImage?: ImageShown;
    }
  | {
      readonly allow: false;
      readonly message: string;
      /** Answer 404 with the message (something the request names reads as absent) instead of 403. */
      readonly notFound?: true;
    }
  | { readonly allow: false; readonly hidden: true };

/**
 * One checkpoint in front of every engine route, like moby's authorization plugins but in
 * process and typed. Runs after the version gate, before the runtime is called.
 *
 * @example
 * const readOnly: EnginePolicy = ({ action }) =>
 *   /\.(list|inspect|logs|json|ping|version|info)$/.test(action) ? allow() : refuse(`${action} is not allowed here`);
 */
export type EnginePolicy = (request: PolicyRequest) => PolicyDecision | Promise<PolicyDecision>;

/** Lets the request through (optionally narrowed to one owner's containers). */
export function allow(onlyOwner?: string): PolicyDecision {
  return onlyOwner === undefined ? { allow: true } : { allow: true, onlyOwner };
}

/** Lets a create (or a build's RUN containers) through without these default capabilities unless its `CapAdd` names them. */
export function allowWithout(capabilities: readonly string[], onlyOwner?: string): PolicyDecision {
  return { allow: true, ...(onlyOwner === undefined ? {} : { onlyOwner }), withoutCapabilities: capabilities };
}

/** Refuses with a 403 `{"message"}`. */
export function refuse(message: string): PolicyDecision {
  return { allow: false, message };
}

/** Answers 404 `{"message"}`: something the request uses (not its target) reads as one that does not exist. */
export function notFound(message: string): PolicyDecision {
  return { allow: false, message, notFound: true };
}

/** Answers as if the target did not exist (404 in dockerd's words). */
export function hide(): PolicyDecision {
  return { allow: false, hidden: true };
}
