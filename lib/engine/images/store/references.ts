import { familiarImageRef } from '../../../engine-api/image-ref.js';
import { parsePullReference } from '../../../engine-api/pull-reference.js';

const ID_PREFIX = /^(?:sha256:)?([0-9a-f]{1,64})$/;

/** The hex ID prefix a reference may be (`3f57d9401f8d`, `sha256:3f57…`), or undefined. */
export function idPrefixOf(ref: string): string | undefined {
  return ID_PREFIX.exec(ref)?.[1];
}

/** A validated familiar reference (`busybox:latest`) for a user-supplied name; throws 400 when malformed. */
export function normalizeRef(ref: string): string {
  return parsePullReference(ref).ref;
}

/** The repository part of a familiar reference (`busybox`, `127.0.0.1:5000/alice/x`). */
export function repositoryOf(ref: string): string {
  const at = ref.indexOf('@');
  if (at !== -1) return ref.slice(0, at);
  const colon = ref.lastIndexOf(':');
  return colon > ref.lastIndexOf('/') ? ref.slice(0, colon) : ref;
}

/** The tag of a familiar `name:tag` reference, or undefined for a digest reference. */
export function tagOf(ref: string): string | undefined {
  if (ref.includes('@')) return undefined;
  const colon = ref.lastIndexOf(':');
  return colon > ref.lastIndexOf('/') ? ref.slice(colon + 1) : undefined;
}

export { familiarImageRef };

/** dockerd's 12-character short ID. */
export const shortId = (id: string): string => id.replace(/^sha256:/, '').slice(0, 12);
