import type { PullReference } from '../../../engine-api/pull-reference.js';

/**
 * The JSON-lines progress dockerd writes for a pull of an image it already has (checked
 * against dockerd 20.10): `{"status":"Pulling from library/busybox","id":"local"}` then
 * `{"status":"Status: Image is up to date for busybox:local"}`. dockerd also writes a
 * `Digest: sha256:…` line with the registry manifest's digest; a local runtime has no manifest,
 * and an invented digest would be worse than none (nothing in the CLI reads that line without
 * content trust).
 *
 * @example
 * upToDateProgress(parsePullReference('busybox', 'local')); // two JSON lines, each ending in "\n"
 */
export function upToDateProgress(target: PullReference): string {
  return [
    { status: `Pulling from ${target.path}`, id: target.tagOrDigest },
    { status: `Status: Image is up to date for ${target.ref}` },
  ]
    .map((line) => `${JSON.stringify(line)}\n`)
    .join('');
}
