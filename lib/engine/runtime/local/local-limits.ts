import { optionChecks } from '../../../options/option-checks.js';

/** Resource limits shared by the local (process and scripted) runtimes. */
export interface LocalLimits {
  /** Bytes of output kept per container. */
  maxLogBytes: number;
  /** Containers kept at once, running or not; a create beyond it is refused until some are removed. */
  maxContainers: number;
}

/**
 * Defaults and validates the limits of a local runtime once, at construction: 1 MiB of output
 * per container and 1000 containers, so a client cannot grow the host's memory without bound.
 *
 * @example
 * localLimits({ maxContainers: 50 }, 'processRuntime') // { maxLogBytes: 1048576, maxContainers: 50 }
 */
export function localLimits(options: { maxLogBytes?: number; maxContainers?: number }, runtime: string): LocalLimits {
  const check = optionChecks(runtime);
  const maxLogBytes = check.integerOption(options.maxLogBytes ?? 1024 * 1024, 'maxLogBytes', 1024);
  const maxContainers = check.integerOption(options.maxContainers ?? 1000, 'maxContainers', 1);
  return { maxLogBytes, maxContainers };
}
