import type { ContainerCreateBody } from '../../../engine-api/runtime-types.js';
import type { LocalImage } from './local-container.js';

/** A create body with its image's config applied, and the command line and environment it gives. */
export interface AppliedConfig {
  /** The body as `docker inspect` shows it: Cmd, Entrypoint, Env, User, WorkingDir, StopSignal and Labels filled from the image. */
  body: ContainerCreateBody;
  argv: string[];
  env: string[];
  labels: Record<string, string>;
}

/**
 * Applies an image config to a create body the way dockerd merges them (daemon/create.go and
 * runconfig's merge): no Entrypoint takes the image's, and then an empty Cmd takes the image's
 * Cmd too; a body that sends an Entrypoint (even an empty one, the CLI's `--entrypoint ""`)
 * keeps only its own Cmd, since the image's Cmd was written for the image's Entrypoint. Env: the body's entries, then the image's entries
 * for names the body does not set. User, WorkingDir and StopSignal: the body's unless empty.
 * Labels: the image's, overridden by the body's. ExposedPorts and Volumes: the image's and the body's.
 *
 * @example
 * applyImageConfig({ Image: 'x', Env: ['A=1'] }, { ref: 'x', id, cmd: ['sh'], env: ['A=0', 'PATH=/bin'] });
 * // argv ['sh'], env ['A=1', 'PATH=/bin']
 */
export function applyImageConfig(body: ContainerCreateBody, image: LocalImage): AppliedConfig {
  const ownEntrypoint = asList(body.Entrypoint);
  const ownCmd = asList(body.Cmd);
  // `--entrypoint ""` arrives as [""]: an entrypoint reset, as dockerd reads it.
  const reset = ownEntrypoint !== undefined && ownEntrypoint.every((a) => a === '');
  const entrypoint = ownEntrypoint === undefined ? image.entrypoint ?? [] : reset ? [] : ownEntrypoint;
  const cmd = ownEntrypoint !== undefined ? ownCmd ?? [] : ownCmd && ownCmd.length > 0 ? ownCmd : image.cmd ?? [];
  const env = mergeEnv(body.Env ?? [], image.env ?? []);
  const labels = { ...(image.labels ?? {}), ...(body.Labels ?? {}) };
  const pick = (own: unknown, fromImage: string | undefined): string | undefined =>
    typeof own === 'string' && own !== '' ? own : fromImage !== undefined && fromImage !== '' ? fromImage : undefined;
  const user = pick(body.User, image.user);
  const workingDir = pick(body.WorkingDir, image.workingDir);
  const stopSignal = pick(body.StopSignal, image.stopSignal);
  // dockerd merges the image's ExposedPorts into the container's (runconfig merge): `-P` publishes both.
  const exposed = image.exposedPorts ?? [];
  const ownExposed = body.ExposedPorts && typeof body.ExposedPorts === 'object' ? (body.ExposedPorts as Record<string, unknown>) : {};
  // So are its Volumes (each an anonymous volume unless the body mounts something there).
  const imageVolumes = image.volumes ?? [];
  const ownVolumes = body.Volumes && typeof body.Volumes === 'object' ? (body.Volumes as Record<string, unknown>) : {};
  const applied: ContainerCreateBody = {
    ...body,
    Cmd: cmd.length > 0 ? cmd : null,
    Entrypoint: entrypoint.length > 0 ? entrypoint : null,
    Env: env,
    Labels: labels,
    ...(user !== undefined ? { User: user } : {}),
    ...(workingDir !== undefined ? { WorkingDir: workingDir } : {}),
    ...(stopSignal !== undefined ? { StopSignal: stopSignal } : {}),
    ...(exposed.length > 0 ? { ExposedPorts: { ...Object.fromEntries(exposed.map((k) => [k, {}])), ...ownExposed } } : {}),
    ...(imageVolumes.length > 0 ? { Volumes: { ...Object.fromEntries(imageVolumes.map((k) => [k, {}])), ...ownVolumes } } : {}),
  };
  return { body: applied, argv: [...entrypoint, ...cmd], env, labels };
}

/** The body's `NAME=value` entries, then the image's for names the body leaves out (dockerd's order). */
export function mergeEnv(own: readonly string[], fromImage: readonly string[]): string[] {
  const name = (entry: string): string => entry.split('=', 1)[0] as string;
  const set = new Set(own.map(name));
  return [...own, ...fromImage.filter((entry) => !set.has(name(entry)))];
}

function asList(value: string[] | string | null | undefined): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  return Array.isArray(value) ? value.map(String) : [String(value)];
}
