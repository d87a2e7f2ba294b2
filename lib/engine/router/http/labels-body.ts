import { EngineError } from '../../../engine-api/engine-error.js';

/** The JSON kind Go's encoding/json names in "cannot unmarshal <kind> into …". */
export function jsonKind(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'boolean') return 'bool';
  return typeof value;
}

/**
 * Checks a create body's `Labels` the way dockerd's decoder does: a string → string map, `null`
 * meaning none. One check for containers, volumes and networks: a label value that is not a
 * string would be stored, and then break every list, inspect and `system df` that shows it
 * (the administrator's included).
 *
 * @param struct The Go struct dockerd decodes the body into, named in the message
 *   (`ContainerConfigWrapper`, `VolumeCreateBody`, `NetworkCreateRequest`).
 * @throws {EngineError} InvalidParameter naming `<struct>.Labels`.
 * @example
 * checkLabels({ team: 1 }, 'VolumeCreateBody'); // throws: json: cannot unmarshal number into Go struct field VolumeCreateBody.Labels of type string
 */
export function checkLabels(labels: unknown, struct: string): void {
  if (labels === undefined || labels === null) return;
  if (typeof labels !== 'object' || Array.isArray(labels)) {
    throw EngineError.invalidParameter(`json: cannot unmarshal ${jsonKind(labels)} into Go struct field ${struct}.Labels of type map[string]string`);
  }
  const bad = Object.values(labels).find((v) => typeof v !== 'string');
  if (bad !== undefined) throw EngineError.invalidParameter(`json: cannot unmarshal ${jsonKind(bad)} into Go struct field ${struct}.Labels of type string`);
}
