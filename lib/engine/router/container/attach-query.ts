import type { Request } from 'express';
import type { AttachOptions } from '../../../engine-api/runtime-types.js';
import { detachKeyBytes } from '../../../engine-api/detach-keys.js';
import { boolValue, queryString } from '../http/query.js';

/**
 * An attach's query, shared by the hijacked and the WebSocket attach: the streams asked for, and
 * `detachKeys` as sent (none when empty). A bad key list is refused here, before anything is
 * attached, in dockerd's words.
 */
export function attachQuery(req: Request): { options: AttachOptions; detachKeys?: string } {
  const keys = queryString(req.query.detachKeys);
  if (keys !== undefined && keys !== '') detachKeyBytes(keys);
  const options: AttachOptions = {
    stdin: boolValue(req.query.stdin),
    stdout: boolValue(req.query.stdout),
    stderr: boolValue(req.query.stderr),
    logs: boolValue(req.query.logs),
    stream: boolValue(req.query.stream),
  };
  return keys !== undefined && keys !== '' ? { options, detachKeys: keys } : { options };
}
