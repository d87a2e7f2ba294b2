import { EngineError } from '../../../engine-api/engine-error.js';
import type { ImportSource } from '../../policy/policy-types.js';

/**
 * `docker import`'s `fromSrc`: `-` is the request body, anything else a URL the engine fetches.
 * The checkpoint and the route both read it through here, so a policy judges exactly the URL
 * the route would fetch.
 *
 * @example
 * importSource('-'); // { kind: 'body' }
 * importSource('HTTP://Example.com/x.tar'); // { kind: 'url', url: 'http://example.com/x.tar' }
 * @throws {EngineError} InvalidParameter in dockerd's words for anything but an http(s) URL.
 */
export function importSource(fromSrc: string): ImportSource {
  return fromSrc === '-' ? { kind: 'body' } : { kind: 'url', url: importUrl(fromSrc) };
}

/**
 * The http(s) URL `fromSrc` names, normalized (WHATWG `href`). Only http and https, refused in
 * dockerd's words otherwise (`Get "ftp://…": unsupported protocol scheme "ftp"`).
 *
 * @throws {EngineError} InvalidParameter naming the scheme.
 */
export function importUrl(fromSrc: string): string {
  let parsed: URL;
  try {
    parsed = new URL(fromSrc);
  } catch {
    throw EngineError.invalidParameter(`Get "${fromSrc}": unsupported protocol scheme ""`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw EngineError.invalidParameter(`Get "${fromSrc}": unsupported protocol scheme "${parsed.protocol.replace(/:$/, '')}"`);
  }
  return parsed.href;
}
