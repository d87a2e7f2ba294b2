import { parsePullReference } from '../../engine-api/pull-reference.js';
import { inNamespace } from './image-namespace.js';
import { ownerOf } from './owner-label.js';

/**
 * Whether a reference is a shared name, one no tenant can write: a name without a namespace
 * (`busybox`, `127.0.0.1:5000/busybox`), Docker Hub's official images (`library/…`), or one
 * under a namespace the operator lists as shared (`sharedNamespaces`). Every other name lies in
 * some `x/…` namespace, which a tenant named `x` writes.
 */
export function isSharedName(ref: string, sharedNamespaces: ReadonlySet<string>): boolean {
  let path: string;
  try {
    path = parsePullReference(ref.split('@')[0] as string).path;
  } catch {
    return false;
  }
  const slash = path.indexOf('/');
  if (slash < 0) return true;
  const namespace = path.slice(0, slash);
  return namespace === 'library' || sharedNamespaces.has(namespace);
}

/** The names of an image as a list row or an inspect body gives them: its tags and its digests. */
export function imageReferences(image: Readonly<Record<string, unknown>>): string[] {
  const refs = (field: unknown): string[] => (Array.isArray(field) ? field.filter((r): r is string => typeof r === 'string' && r !== '<none>:<none>' && r !== '<none>@<none>') : []);
  return [...refs(image.RepoTags), ...refs(image.RepoDigests)];
}

/** The bare hex of an image id (`sha256:abc…` and `abc…` alike). */
export function bareImageId(id: unknown): string {
  return typeof id === 'string' ? id.replace(/^sha256:/, '') : '';
}

/**
 * Whether a tenant sees an image: one of its names (tags or digests) is in the subject's own
 * namespace or is a shared name ({@link isSharedName}), its config carries the subject's owner
 * label (`docker commit` keeps the container's labels, so a tenant's untagged commit is its
 * own), or, whatever its names, it is the image of one of the subject's containers (`used` holds
 * those images' bare ids). An image named only in other namespaces, or left without a name, is
 * another owner's.
 */
export function imageVisible(image: Readonly<Record<string, unknown>>, subject: string | undefined, sharedNamespaces: ReadonlySet<string>, used: ReadonlySet<string>): boolean {
  if (imageReferences(image).some((ref) => isSharedName(ref, sharedNamespaces) || inNamespace(ref.split('@')[0] as string, subject))) return true;
  if (subject !== undefined && ownerOf(imageLabels(image)) === subject) return true;
  return used.has(bareImageId(image.Id));
}

/** An image's config labels, from a list row (`Labels`) or an inspect body (`Config.Labels`). */
function imageLabels(image: Readonly<Record<string, unknown>>): unknown {
  const config = image.Config;
  if (config && typeof config === 'object' && 'Labels' in config) return (config as { Labels?: unknown }).Labels;
  return image.Labels;
}
