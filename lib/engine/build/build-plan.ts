import { EngineError } from '../../engine-api/engine-error.js';
import type { DockerfileInstruction, ParsedDockerfile } from './dockerfile/parse-dockerfile.js';

/** One stage: its FROM and the instructions after it. */
export interface BuildStage {
  from: DockerfileInstruction;
  /** `AS name`, lower case (stage names are matched case-insensitively). */
  name?: string;
  instructions: DockerfileInstruction[];
}

/** What a build runs: the ARGs before the first FROM, the stages up to the target, and the step count. */
export interface BuildPlan {
  metaArgs: DockerfileInstruction[];
  stages: BuildStage[];
  /** `Step N/<total>`: the ARGs before the first FROM, every FROM and instruction of the stages run (dockerd counts them all). */
  total: number;
}

/**
 * Splits a Dockerfile into stages as the classic builder does, stopping at `target` (its name),
 * and appends a LABEL step for the request's `labels` to the last stage (dockerd does the same,
 * so the step is printed). Anything but ARG before the first FROM is dockerd's 400.
 *
 * @example
 * planBuild(parseDockerfile('FROM a AS x\nRUN y\nFROM x\n'), undefined, {}).total; // 3
 */
export function planBuild(parsed: ParsedDockerfile, target: string | undefined, labels: Record<string, string>): BuildPlan {
  const metaArgs: DockerfileInstruction[] = [];
  const stages: BuildStage[] = [];
  for (const instruction of parsed.instructions) {
    if (instruction.keyword === 'from') {
      const name = /\s+as\s+(\S+)\s*$/i.exec(instruction.args)?.[1]?.toLowerCase();
      stages.push({ from: instruction, ...(name ? { name } : {}), instructions: [] });
      continue;
    }
    const stage = stages[stages.length - 1];
    if (!stage) {
      if (instruction.keyword !== 'arg') throw EngineError.invalidParameter('Please provide a source image with `from` prior to commit');
      metaArgs.push(instruction);
      continue;
    }
    stage.instructions.push(instruction);
  }
  if (stages.length === 0) throw EngineError.invalidParameter('the Dockerfile (Dockerfile) cannot be empty');
  let run = stages;
  if (target !== undefined && target !== '') {
    const at = stages.findIndex((s) => s.name === target.toLowerCase());
    if (at < 0) throw EngineError.invalidParameter(`failed to reach build target ${target} in Dockerfile`);
    run = stages.slice(0, at + 1);
  }
  const entries = Object.entries(labels);
  if (entries.length > 0) {
    const args = entries.map(([k, v]) => `${JSON.stringify(k)}=${JSON.stringify(v)}`).join(' ');
    const last = run[run.length - 1] as BuildStage;
    run = [...run.slice(0, -1), { ...last, instructions: [...last.instructions, { keyword: 'label', args, original: `LABEL ${args}`, line: 0 }] }];
  }
  const total = metaArgs.length + run.reduce((sum, s) => sum + 1 + s.instructions.length, 0);
  return { metaArgs, stages: run, total };
}
