import type { Request } from 'express';
import type { BuildSpec } from '../../../engine-api/build-operations.js';
import { containerSpecOf } from '../../../engine-api/container-spec.js';
import { buildRequestOptions } from '../http/build-query.js';

/**
 * Decodes `POST /build`'s query once (build-query.ts), for the policy and the route alike: the
 * builder's options, and the RUN containers' typed spec (their HostConfig fields and network mode),
 * which the policy judges as a create's and each RUN step runs with. The route registers it with
 * `engineRoute`, which decodes before the policy checkpoint. A refused query leaves the context
 * unread: it is drained so the 400 reaches the client.
 *
 * @throws {EngineError} InvalidParameter naming the parameter.
 */
export function decodeBuildSpec(req: Request): BuildSpec {
  let options;
  try {
    options = buildRequestOptions(req);
  } catch (error) {
    req.resume();
    throw error;
  }
  const run = containerSpecOf({ Image: '', HostConfig: { ...options.hostConfig, ...(options.networkMode ? { NetworkMode: options.networkMode } : {}) } });
  return { options, run };
}
