import type { ContainerSpec } from '../../../engine-api/container-spec.js';
import type { LocalImage } from './local-container.js';

/** A container spec with its image's config applied, and the command line and environment it gives. */
export interface AppliedConfig {
  /** The spec as the container runs it: cmd, entrypoint, env, labels, user, workingDir, stopSignal, exposedPorts and volumes filled from the image. */
  spec: ContainerSpec;
  argv: string[];
  env: string[];
  labels: Record<string, string>;
}

/**
 * Applies an image config to a container spec the way dockerd merges them (daemon/create.go and
 * runconfig's merge): no Entrypoint takes the image's, and then an empty Cmd takes the image's
 * Cmd too; a spec that sends an Entrypoint (even an empty one, the CLI's `--entrypoint ""`)
 * keeps only its own Cmd, since the image's Cmd was written for the image's Entrypoint. Env: the spec's entries, then the image's entries
 * for names the spec does not set. User, WorkingDir and StopSignal: the spec's unless empty.
 * Labels: the image's, overridden by the spec's. ExposedPorts and Volumes: the image's, then the spec's.
 * The spec's `raw` body is left as sent (container-views.ts keeps the body inspect shows).
 *
 * @example
 * applyImageConfig(containerSpecOf({ Image: 'x', Env: ['A=1'] }), { ref: 'x', id, cmd: ['sh'], env: ['A=0', 'PATH=/bin'] });
 * // argv ['sh'], env ['A=1', 'PATH=/bin']
 */
export function applyImageConfig(spec: ContainerSpec, image: LocalImage): AppliedConfig {
  const ownEntrypoint = spec.entrypoint;
  const ownCmd = spec.cmd;
  // `--entrypoint ""` arrives as [""]: an entrypoint reset, as dockerd reads it.
  const reset = ownEntrypoint !== undefined && ownEntrypoint.every((a) => a === '');
  const entrypoint = ownEntrypoint === undefined ? image.entrypoint ?? [] : reset ? [] : [...ownEntrypoint];
  const cmd = ownEntrypoint !== undefined ? [...(ownCmd ?? [])] : ownCmd && ownCmd.length > 0 ? [...ownCmd] : image.cmd ?? [];
  const env = mergeEnv(spec.env, image.env ?? []);
  const labels = { ...(image.labels ?? {}), ...spec.labels };
  const pick = (own: string, fromImage: string | undefined): string => (own !== '' ? own : fromImage ?? '');
  const applied: ContainerSpec = {
    ...spec,
    env,
    labels,
    user: pick(spec.user, image.user),
    workingDir: pick(spec.workingDir, image.workingDir),
    stopSignal: pick(spec.stopSignal, image.stopSignal),
    // dockerd merges the image's ExposedPorts into the container's (runconfig merge): `-P` publishes both.
    exposedPorts: union(image.exposedPorts ?? [], spec.exposedPorts),
    // So are its Volumes (each an anonymous volume unless the spec mounts something there).
    volumes: union(image.volumes ?? [], spec.volumes),
  };
  delete applied.cmd;
  delete applied.entrypoint;
  if (cmd.length > 0) applied.cmd = cmd;
  if (entrypoint.length > 0) applied.entrypoint = entrypoint;
  return { spec: applied, argv: [...entrypoint, ...cmd], env, labels };
}

/** The image's keys, then the spec's others (the order of `{ ...image, ...own }`). */
function union(fromImage: readonly string[], own: readonly string[]): string[] {
  return [...new Set([...fromImage, ...own])];
}

/** The body's `NAME=value` entries, then the image's for names the body leaves out (dockerd's order). */
export function mergeEnv(own: readonly string[], fromImage: readonly string[]): string[] {
  const name = (entry: string): string => entry.split('=', 1)[0] as string;
  const set = new Set(own.map(name));
  return [...own, ...fromImage.filter((entry) => !set.has(name(entry)))];
}
