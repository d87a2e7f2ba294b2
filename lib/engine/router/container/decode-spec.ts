import { EngineError } from '../../../engine-api/engine-error.js';
import { containerSpecOf, withHostSpec, withLabels, type ContainerSpec } from '../../../engine-api/container-spec.js';
import type { ContainerCreateBody, ContainerRuntime } from '../../../engine-api/runtime-types.js';
import { refuseUnsupportedFields } from '../../../engine-api/create-fields.js';
import { apiVersionLessThan } from '../../../engine-api/api-version.js';
import { withGoFieldCase } from '../../../engine-api/go-field-case.js';
import { OWNER_LABEL } from '../../policy/owner-label.js';
import { checkCreateBody } from './create-body.js';

/**
 * Decodes a `POST /containers/create` body once, for every policy and runtime after it: its keys
 * spelled as Go's structs do (go-field-case.ts), the JSON types dockerd's decoder checks (create-body.ts), an Image, each API version's quirks, then the
 * typed {@link ContainerSpec}. The route registers it with `engineRoute`, which decodes before the
 * policy checkpoint, so the policy judges the spec the runtime is handed.
 *
 * @throws {EngineError} InvalidParameter naming the field.
 * @example
 * decodeContainerSpec({ Image: 'busybox', Cmd: 'true' }, '1.41').cmd; // ['true']
 */
export function decodeContainerSpec(sent: unknown, apiVersion: string): ContainerSpec {
  // Keys in any case, as dockerd's decoder takes them (`hostconfig`, `privileged`).
  const body = withGoFieldCase(sent);
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw EngineError.invalidParameter('Config cannot be empty in order to create a container');
  }
  checkCreateBody(body as Record<string, unknown>);
  // A copy: the body as sent is not changed.
  const raw = { ...(body as ContainerCreateBody) };
  if (typeof raw.Image !== 'string' || raw.Image.trim() === '') {
    throw EngineError.invalidParameter('Config cannot be empty in order to create a container');
  }
  // AutoRemove arrived in API 1.25; older requests never get it (container_routes.go).
  if (apiVersionLessThan(apiVersion, '1.25') && raw.HostConfig && typeof raw.HostConfig === 'object') {
    raw.HostConfig = { ...raw.HostConfig, AutoRemove: false };
  }
  return containerSpecOf(raw);
}

/** What create settles over the decoded spec before the runtime sees it. */
export interface CreateSettlement {
  /** The creator under a policy: recorded in the owner label (kept across restarts) unless the body set it. */
  owner?: string;
  /** Default capabilities the policy takes away: added to CapDrop unless CapAdd names them (or ALL). */
  withoutCapabilities?: readonly string[];
}

/** `CAP_NET_RAW`, `net_raw` → `NET_RAW` (dockerd accepts every spelling). */
const capabilityName = (cap: string): string => cap.toUpperCase().replace(/^CAP_/, '');

/**
 * The decoded spec with the owner label and the policy's dropped capabilities written in (typed
 * and in the kept body alike, without decoding again); then a field `runtime` does not honor (its
 * `createFields`) is refused by name, before anything is made.
 *
 * @throws {EngineError} InvalidParameter naming the field.
 * @example
 * settleContainerSpec(spec, { owner: 'alice' }, runtime).labels; // { 'io.dockgate.owner': 'alice', … }
 */
export function settleContainerSpec(spec: ContainerSpec, settle: CreateSettlement, runtime?: Pick<ContainerRuntime, 'name' | 'createFields'>): ContainerSpec {
  let out = spec;
  if (settle.owner !== undefined && out.labels[OWNER_LABEL] === undefined) out = withLabels(out, { ...out.labels, [OWNER_LABEL]: settle.owner });
  const caps = settle.withoutCapabilities ?? [];
  if (caps.length > 0) {
    const named = new Set([...out.host.capAdd, ...out.host.capDrop].map(capabilityName));
    const missing = caps.filter((cap) => !named.has(cap) && !named.has('ALL'));
    if (missing.length > 0) out = withHostSpec(out, { capDrop: [...out.host.capDrop, ...missing] });
  }
  if (runtime) refuseUnsupportedFields(out.raw, runtime.createFields, runtime.name ?? 'custom');
  return out;
}
