import { parsePullReference } from '../../engine-api/pull-reference.js';

/**
 * Whether an image reference lies in the subject's own namespace: `bob/app`, `bob/tools/x:1`,
 * or the same behind a registry (`127.0.0.1:5000/bob/app`, `docker.io/bob/app`). Shared names
 * (`busybox`, `library/…`, another's `alice/…`) do not, nor does a malformed reference.
 */
export function inNamespace(ref: string, subject: string | undefined): boolean {
  if (subject === undefined || subject === '') return false;
  let path: string;
  try {
    path = parsePullReference(ref).path;
  } catch {
    return false;
  }
  const slash = path.indexOf('/');
  return slash > 0 && path.slice(0, slash) === subject;
}
