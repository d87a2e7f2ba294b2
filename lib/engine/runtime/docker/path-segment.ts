import { EngineError } from '../../../engine-api/engine-error.js';

/** What a reference names, for the engine's own "not found" wording. */
export type ReferenceKind = 'container' | 'image' | 'exec' | 'network' | 'volume';

const NOT_FOUND: Record<ReferenceKind, (ref: string) => string> = {
  container: (ref) => `No such container: ${ref}`,
  image: (ref) => `No such image: ${ref}`,
  exec: (ref) => `No such exec instance: ${ref}`,
  network: (ref) => `network ${ref} not found`,
  volume: (ref) => `get ${ref}: no such volume`,
};

/**
 * A client's reference (container id or name, image reference, exec id…) as one segment of the
 * path forwarded to the engine. Percent-encoding keeps `/`, `?` and `%` inside the segment, but
 * dockerd decodes the path before routing and cleans `.` and `..` segments (answering with a
 * redirect to the cleaned path), so `..` — bare or between encoded slashes — would name another
 * endpoint. No container, image, exec, network or volume can be named so (dockerd's name and
 * reference grammars refuse dot segments), so such a reference is answered as the unknown object
 * it is, without asking the engine.
 *
 * @example
 * pathSegment('library/busybox:1', 'image'); // 'library%2Fbusybox%3A1'
 * pathSegment('..'); // throws 404 "No such container: .."
 */
export function pathSegment(ref: string, kind: ReferenceKind = 'container'): string {
  if (ref === '') throw EngineError.invalidParameter('invalid name or ID supplied: ""');
  if (ref.split('/').some((part) => part === '.' || part === '..')) throw EngineError.notFound(NOT_FOUND[kind](ref));
  return encodeURIComponent(ref);
}
