import { EngineError } from '../../engine-api/engine-error.js';
import type { ImageRunConfig } from '../images/image-store-types.js';
import { parseDockerfile } from './dockerfile/parse-dockerfile.js';
import { variablesOf } from './dockerfile/substitute.js';
import { applyConfigInstruction, COMMIT_INSTRUCTIONS, type ConfigState } from './instructions/config-instructions.js';

/** The container config fields an image config keeps (image-spec config.md `config`, and dockerd's extras). */
const IMAGE_FIELDS = ['User', 'ExposedPorts', 'Env', 'Entrypoint', 'Cmd', 'Volumes', 'WorkingDir', 'Labels', 'StopSignal', 'Healthcheck', 'OnBuild', 'Shell', 'ArgsEscaped'] as const;

/**
 * The config of a committed image, as dockerd makes it (daemon/commit.go): the request's config
 * (or, without one, the container's), with the `changes` instructions applied, then every field
 * it leaves empty filled from the container's config (Env and Labels merged key by key, ports and
 * volumes added, the Cmd kept only when no Entrypoint was given). A change that commit cannot
 * apply is dockerd's 400 `<instruction> is not a valid change command`.
 *
 * @example
 * commitConfig({ Cmd: ['sh'] }, undefined, ['CMD ["x"]', 'ENV A=1']); // { Cmd: ['x'], Env: ['A=1'] }
 */
export function commitConfig(container: ImageRunConfig, user: ImageRunConfig | undefined, changes: readonly string[]): ImageRunConfig {
  const base = pick(user ?? container);
  if (changes.length > 0) {
    const parsed = parseDockerfile(changes.join('\n'));
    const state: ConfigState = { config: base, shell: ['/bin/sh', '-c'], cmdSet: true };
    for (const instruction of parsed.instructions) {
      if (!COMMIT_INSTRUCTIONS.has(instruction.keyword)) throw EngineError.invalidParameter(`${instruction.keyword} is not a valid change command`);
      applyConfigInstruction(state, instruction.keyword, instruction.args, variablesOf(base.Env ?? []), parsed.escape);
    }
  }
  return merge(base, pick(container));
}

function pick(config: ImageRunConfig): ImageRunConfig {
  const out: ImageRunConfig = {};
  for (const field of IMAGE_FIELDS) if (config[field] !== undefined) (out as Record<string, unknown>)[field] = structuredClone(config[field]);
  return out;
}

function merge(own: ImageRunConfig, from: ImageRunConfig): ImageRunConfig {
  const out = { ...own };
  if (!out.User) out.User = from.User ?? '';
  if (!out.ExposedPorts || Object.keys(out.ExposedPorts).length === 0) out.ExposedPorts = from.ExposedPorts;
  else out.ExposedPorts = { ...(from.ExposedPorts ?? {}), ...out.ExposedPorts };
  if (!out.Env || out.Env.length === 0) out.Env = from.Env;
  else {
    const keys = new Set(out.Env.map((e) => e.split('=')[0]));
    out.Env = [...out.Env, ...(from.Env ?? []).filter((e) => !keys.has(e.split('=')[0]))];
  }
  out.Labels = { ...(from.Labels ?? {}), ...(out.Labels ?? {}) };
  if (!out.Entrypoint || out.Entrypoint.length === 0) {
    if (!out.Cmd || out.Cmd.length === 0) out.Cmd = from.Cmd;
    if (out.Entrypoint === undefined) out.Entrypoint = from.Entrypoint;
  }
  if (out.Healthcheck === undefined && from.Healthcheck !== undefined) out.Healthcheck = from.Healthcheck;
  if (!out.WorkingDir) out.WorkingDir = from.WorkingDir;
  if (!out.Volumes || Object.keys(out.Volumes).length === 0) out.Volumes = from.Volumes;
  else out.Volumes = { ...(from.Volumes ?? {}), ...out.Volumes };
  if (!out.StopSignal) out.StopSignal = from.StopSignal;
  if (!out.OnBuild || (out.OnBuild as unknown[]).length === 0) out.OnBuild = from.OnBuild;
  for (const key of Object.keys(out)) if (out[key] === undefined) delete out[key];
  return out;
}
