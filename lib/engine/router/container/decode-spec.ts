import { EngineError } from '../../../engine-api/engine-error.js';
import { containerSpecOf, type ContainerSpec } from '../../../engine-api/container-spec.js';
import type { ContainerCreateBody, ContainerRuntime } from '../../../engine-api/runtime-types.js';
import { refuseUnsupportedFields } from '../../../engine-api/create-fields.js';
import { apiVersionLessThan } from '../../../engine-api/api-version.js';
import { checkCreateBody } from './create-body.js';

/**
 * Decodes a `POST /containers/create` body once, for every policy and runtime after it: the JSON
 * types dockerd's decoder checks (create-body.ts), an Image, each API version's quirks, then the
 * typed {@link ContainerSpec}. `adjust` changes the body as sent before it is typed (the owner
 * label, a policy's dropped capabilities), `check` sees it then, and a field `runtime` does not
 * honor (its `createFields`) is refused by name.
 *
 * @throws {EngineError} InvalidParameter naming the field.
 * @example
 * decodeContainerSpec({ Image: 'busybox', Cmd: 'true' }, '1.41').cmd; // ['true']
 */
export function decodeContainerSpec(
  body: unknown, apiVersion: string, adjust: (raw: ContainerCreateBody) => ContainerCreateBody = (raw) => raw, check?: (raw: ContainerCreateBody) => void,
  runtime?: Pick<ContainerRuntime, 'name' | 'createFields'>,
): ContainerSpec {
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw EngineError.invalidParameter('Config cannot be empty in order to create a container');
  }
  checkCreateBody(body as Record<string, unknown>);
  // A copy: the policy was handed the body as sent.
  let raw = { ...(body as ContainerCreateBody) };
  if (typeof raw.Image !== 'string' || raw.Image.trim() === '') {
    throw EngineError.invalidParameter('Config cannot be empty in order to create a container');
  }
  // AutoRemove arrived in API 1.25; older requests never get it (container_routes.go).
  if (apiVersionLessThan(apiVersion, '1.25') && raw.HostConfig && typeof raw.HostConfig === 'object') {
    raw.HostConfig = { ...raw.HostConfig, AutoRemove: false };
  }
  raw = adjust(raw);
  check?.(raw);
  // What the runtime does not honor is refused here, naming the field, before anything is made.
  if (runtime) refuseUnsupportedFields(raw, runtime.createFields, runtime.name ?? 'custom');
  return containerSpecOf(raw);
}
