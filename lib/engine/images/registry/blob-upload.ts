import type { Readable } from 'node:stream';
import { EngineError } from '../../../engine-api/engine-error.js';
import { registryErrors } from './registry-errors.js';
import type { RegistrySession } from './registry-session.js';

/**
 * A registry's refusal of a push step, in the words the Docker client library gives it
 * (`denied: requested access to the resource is denied`, `unauthorized: authentication required`,
 * `blob upload invalid: …`): the first registry error's code in lower-case words and its message.
 */
export async function pushRefusal(res: Response, what: string): Promise<EngineError> {
  const body = await res.text().catch(() => '');
  const first = registryErrors(res.status, res.headers.get('www-authenticate'), body)[0];
  if (!first) return EngineError.fromStatus(res.status >= 400 && res.status < 600 ? res.status : 500, `${what}: unexpected registry answer: HTTP ${res.status}`);
  const message = `${first.code.toLowerCase().replace(/_/g, ' ')}: ${first.message}`;
  // A 401 from the daemon would make the Docker CLI ask for a login on stdin; dockerd writes these in the stream.
  return EngineError.fromStatus(res.status === 401 || res.status === 403 ? 500 : res.status >= 400 && res.status < 600 ? res.status : 500, message);
}

/** Whether the repository holds the blob (`HEAD /v2/<name>/blobs/<digest>`, distribution spec "Checking if content exists"). */
export async function blobExists(session: RegistrySession, digest: string): Promise<boolean> {
  const res = await session.send('HEAD', `blobs/${digest}`);
  await res.body?.cancel();
  if (res.status === 200) return true;
  if (res.status === 404) return false;
  throw await pushRefusal(res, 'checking a blob');
}

/**
 * Asks the registry to mount the blob from another repository it holds (`POST
 * /v2/<name>/blobs/uploads/?mount=<digest>&from=<repo>`): 201 is mounted; 202 means it would not
 * (no such blob there, or the token does not grant pull on `from`) and opens an upload instead,
 * whose location is answered for the caller to use.
 */
export async function mountBlob(session: RegistrySession, digest: string, from: string): Promise<{ mounted: true } | { mounted: false; location: string }> {
  const res = await session.send('POST', `blobs/uploads/?mount=${encodeURIComponent(digest)}&from=${encodeURIComponent(from)}`);
  await res.body?.cancel();
  if (res.status === 201) return { mounted: true };
  if (res.status === 202 && res.headers.get('location')) return { mounted: false, location: res.headers.get('location') as string };
  throw await pushRefusal(res, 'mounting a blob');
}

/** Opens an upload session (`POST /v2/<name>/blobs/uploads/`), answering its location. */
export async function startUpload(session: RegistrySession): Promise<string> {
  const res = await session.send('POST', 'blobs/uploads/');
  await res.body?.cancel();
  const location = res.headers.get('location');
  if (res.status === 202 && location) return location;
  throw await pushRefusal(res, 'starting a blob upload');
}

/**
 * Sends a blob into an open upload and closes it with its digest: the bytes stream in one
 * chunked `PATCH` (as the Docker client sends a layer it compresses on the way, size unknown in
 * advance), then `PUT <location>?digest=<digest>` once the digest is known, which the registry
 * verifies against what it received. A buffer (a config) goes as one monolithic `PUT`.
 */
export async function uploadBlob(session: RegistrySession, location: string, body: Readable | Buffer, digest: () => Promise<string>): Promise<void> {
  let closeAt = location;
  if (!Buffer.isBuffer(body)) {
    const res = await session.send('PATCH', location, { headers: { 'Content-Type': 'application/octet-stream' }, body });
    await res.body?.cancel();
    if (res.status !== 202) throw await pushRefusal(res, 'uploading a blob');
    closeAt = res.headers.get('location') ?? location;
  }
  const url = new URL(closeAt, 'http://relative.invalid');
  url.searchParams.set('digest', await digest());
  const target = closeAt.startsWith('/') ? `${url.pathname}${url.search}` : url.href;
  const res = await session.send('PUT', target, Buffer.isBuffer(body)
    ? { headers: { 'Content-Type': 'application/octet-stream' }, body }
    : {});
  await res.body?.cancel();
  if (res.status !== 201) throw await pushRefusal(res, 'finishing a blob upload');
}
