import type { Request } from 'express';
import { EngineError } from '../../../engine-api/engine-error.js';
import { BUILD_HOST_FIELDS, type BuildSpec } from '../../../engine-api/build-operations.js';
import { parsePullReference } from '../../../engine-api/pull-reference.js';
import { serverPlatform } from '../../images/store/platform.js';
import { boolValue, queryString } from './query.js';

/** The build options the query gives (everything of BuildRequest but the context and the caller's parts). */
export type BuildQueryOptions = BuildSpec['options'];

const NETWORK_MODES = new Set(['', 'default', 'bridge', 'none', 'host']);

/**
 * Reads `POST /build`'s query as dockerd does (api/server/router/build newImageBuildOptions):
 * `t` repeated, JSON `buildargs`, `labels` and `cachefrom`, `rm` defaulting to true. What this
 * builder cannot do is a 400 naming the parameter: a remote context, `platform` other than this
 * server's, BuildKit (`version=2`, `outputs`), `squash`, an `isolation`.
 */
export function buildRequestOptions(req: Request): BuildQueryOptions {
  const q = req.query;
  const remote = queryString(q.remote);
  if (remote !== undefined && remote !== '') {
    throw EngineError.invalidParameter('remote: building from a remote context (a git repository or tarball URL) is not supported; send the context as the request body (docker build PATH or -)');
  }
  if (queryString(q.version) === '2') throw EngineError.invalidParameter('version: BuildKit (version=2) is not supported; this engine runs the classic builder (DOCKER_BUILDKIT=0)');
  if ((queryString(q.outputs) ?? '') !== '') throw EngineError.invalidParameter('outputs: build outputs are a BuildKit feature, not supported by the classic builder');
  if (boolValue(q.squash)) throw EngineError.invalidParameter('squash is only supported with experimental mode');
  const isolation = queryString(q.isolation) ?? '';
  if (isolation !== '' && isolation !== 'default') throw EngineError.invalidParameter(`isolation: ${isolation} is not supported (only the default)`);
  const platform = queryString(q.platform) ?? '';
  if (platform !== '' && platform.toLowerCase() !== serverPlatform()) {
    throw EngineError.invalidParameter(`platform: only this server's platform (${serverPlatform()}) can be built, not ${platform}`);
  }
  const tags = (Array.isArray(q.t) ? q.t : q.t === undefined ? [] : [q.t]).map(String).filter((t) => t !== '').map((t) => {
    try {
      return parsePullReference(t).ref;
    } catch {
      throw EngineError.invalidParameter(`invalid reference format: ${t}`);
    }
  });
  const networkMode = queryString(q.networkmode) ?? '';
  if (!NETWORK_MODES.has(networkMode)) throw EngineError.invalidParameter(`networkmode: ${networkMode} is not supported for builds (default, bridge, none or host)`);
  const hostConfig: Record<string, unknown> = {};
  for (const [param, field, kind] of BUILD_HOST_FIELDS) {
    if (field === 'ExtraHosts') {
      // Every `extrahosts` value is one entry (dockerd's r.Form["extrahosts"]): the CLI and docker-py repeat the parameter.
      const entries = (Array.isArray(q[param]) ? q[param] as unknown[] : [q[param]]).filter((v): v is string => typeof v === 'string' && v !== '' && v !== '[]' && v !== 'null');
      if (entries.length > 0) hostConfig[field] = entries;
      continue;
    }
    const raw = queryString(q[param]);
    // The CLI sends every limit, 0 (numbers) and [] or null (lists) meaning unset.
    if (raw === undefined || raw === '' || raw === '[]' || raw === 'null' || (kind === 'number' && raw === '0')) continue;
    if (kind === 'number') {
      if (!/^-?\d+$/.test(raw)) throw EngineError.invalidParameter(`${param}: ${raw} is not an integer`);
      hostConfig[field] = Number(raw);
    } else if (kind === 'json') hostConfig[field] = json(param, raw);
    else hostConfig[field] = raw;
  }
  const buildArgs = json('buildargs', queryString(q.buildargs)) ?? {};
  if (typeof buildArgs !== 'object' || Array.isArray(buildArgs) || !Object.values(buildArgs).every((v) => v === null || typeof v === 'string')) {
    throw EngineError.invalidParameter('buildargs must be a JSON object of strings');
  }
  const labels = json('labels', queryString(q.labels)) ?? {};
  if (typeof labels !== 'object' || Array.isArray(labels) || !Object.values(labels).every((v) => typeof v === 'string')) {
    throw EngineError.invalidParameter('labels must be a JSON object of strings');
  }
  const cacheFrom = json('cachefrom', queryString(q.cachefrom)) ?? [];
  if (!Array.isArray(cacheFrom) || !cacheFrom.every((v) => typeof v === 'string')) throw EngineError.invalidParameter('cachefrom must be a JSON array of image names');
  const rm = q.rm === undefined || queryString(q.rm) === '' ? true : boolValue(q.rm);
  const target = queryString(q.target);
  return {
    dockerfile: queryString(q.dockerfile) || 'Dockerfile',
    tags,
    ...(target ? { target } : {}),
    nocache: boolValue(q.nocache),
    pull: boolValue(q.pull),
    rm,
    forcerm: boolValue(q.forcerm),
    quiet: boolValue(q.q),
    labels: labels as Record<string, string>,
    buildArgs: buildArgs as Record<string, string | null>,
    cacheFrom: cacheFrom as string[],
    ...(networkMode !== '' && networkMode !== 'default' ? { networkMode } : {}),
    hostConfig,
  };
}

function json(param: string, raw: string | undefined): unknown {
  if (raw === undefined || raw === '') return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    throw EngineError.invalidParameter(`${param} is not valid JSON`);
  }
}
