import type { ContainerSpec } from '../../../engine-api/container-spec.js';
import type { LocalContainer } from './local-container.js';
import { executionSpec } from './container-mounts.js';

/** What the executor runs: the container's spec with its volumes as binds of their directories. */
export function runSpec(c: LocalContainer): ContainerSpec {
  return c.mounts ? executionSpec(c.spec, c.mounts) : c.spec;
}
