import { DOCKER_HUB_DOMAINS, isDomain, isPathComponent, splitRepositoryName } from '../reference/repository-name.js';
import { EngineError } from './engine-error.js';
import { familiarImageRef } from './image-ref.js';

/** distribution/reference's grammar, in the pieces `POST /images/create` needs. */
const TAG = /^[\w][\w.-]{0,127}$/;
const DIGEST = /^[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}$/;

/** A validated pull target. */
export interface PullReference {
  /** Familiar form with its tag or digest (`busybox:latest`, `127.0.0.1:5000/app@sha256:…`). */
  ref: string;
  /** Repository path as registries name it: `library/busybox`, `alice/app`. */
  path: string;
  /** The tag, or the digest for a digest reference. */
  tagOrDigest: string;
}

/**
 * The image `POST /images/create?fromImage=…&tag=…` asks for, as dockerd reads it
 * (daemon/images/image_pull.go): `tag` replaces a tag in `fromImage`, a `tag` holding a colon
 * is a digest, and neither means `latest` (dockerd would pull every tag, which no local runtime
 * can mean; the Docker CLI always sends a tag unless `docker pull -a`). Malformed input is a
 * 400 with dockerd's words.
 *
 * @example
 * parsePullReference('docker.io/library/nope', '1'); // { ref: 'nope:1', path: 'library/nope', tagOrDigest: '1' }
 */
export function parsePullReference(fromImage: string, tag?: string): PullReference {
  let name = fromImage.trim();
  let suffix: string | undefined;
  const at = name.indexOf('@');
  if (at !== -1) {
    suffix = name.slice(at + 1);
    name = name.slice(0, at);
    if (!DIGEST.test(suffix)) throw EngineError.invalidParameter('invalid reference format');
  } else {
    const colon = name.lastIndexOf(':');
    if (colon > name.lastIndexOf('/')) {
      suffix = name.slice(colon + 1);
      name = name.slice(0, colon);
      if (!TAG.test(suffix)) throw EngineError.invalidParameter('invalid reference format');
    }
  }
  if (tag !== undefined && tag !== '') {
    if (tag.includes(':') ? !DIGEST.test(tag) : !TAG.test(tag)) throw EngineError.invalidParameter('invalid tag format');
    suffix = tag;
  }
  const { domain, components } = splitRepositoryName(name);
  if (domain !== undefined && !isDomain(domain)) throw EngineError.invalidParameter('invalid reference format');
  if (components.some((c) => c !== c.toLowerCase() && isPathComponent(c.toLowerCase()))) {
    throw EngineError.invalidParameter('invalid reference format: repository name must be lowercase');
  }
  if (components.length === 0 || !components.every(isPathComponent)) throw EngineError.invalidParameter('invalid reference format');
  const onHub = domain === undefined || DOCKER_HUB_DOMAINS.includes(domain);
  const path = onHub && components.length === 1 ? `library/${components[0]}` : components.join('/');
  const tagOrDigest = suffix ?? 'latest';
  const joined = `${name}${tagOrDigest.includes(':') ? '@' : ':'}${tagOrDigest}`;
  return { ref: familiarImageRef(joined), path, tagOrDigest };
}
