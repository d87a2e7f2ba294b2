import type { ContainerCreateBody } from '../../../engine-api/runtime-types.js';
import { containerSpecOf, type ContainerSpec } from '../../../engine-api/container-spec.js';
import type { LocalContainer } from './local-container.js';
import { executionBody } from './container-mounts.js';

/** What the executor runs: the kept body with its volumes as binds of their directories, and that typed. */
export function runBody(c: LocalContainer): { body: ContainerCreateBody; spec: ContainerSpec } {
  if (!c.mounts) return { body: c.body, spec: c.spec };
  const body = executionBody(c.body, c.mounts);
  return { body, spec: containerSpecOf(body) };
}
