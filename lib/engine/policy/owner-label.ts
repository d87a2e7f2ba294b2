/**
 * The label that records which subject created a container. It is kept with the container's
 * other labels: in the local runtimes' container records on disk, and by dockerd for the Docker
 * runtime, so ownership survives a restart of dockgate (and of dockerd). The engine sets it on
 * create; a caller may not choose it (only an administrator may create on another's behalf).
 */
export const OWNER_LABEL = 'dockgate.owner';

/** The owner recorded in a label map (inspect's `Config.Labels`, a list row's `Labels`). */
export function ownerOf(labels: unknown): string | undefined {
  if (typeof labels !== 'object' || labels === null) return undefined;
  const value = (labels as Record<string, unknown>)[OWNER_LABEL];
  return typeof value === 'string' ? value : undefined;
}
