import { optionChecks } from '../../../options/option-checks.js';

/** Resource limits shared by the local (process and scripted) runtimes. */
export interface LocalLimits {
  /** Bytes of output kept per container. */
  maxLogBytes: number;
  /** Containers kept at once, running or not; a create beyond it is refused until some are removed. */
  maxContainers: number;
  /** Bytes a container's log files may hold together: its LogConfig's `max-size` × `max-file` (log-config.ts). */
  maxLogFilesBytes: number;
}

/** What a container's rotated log files may hold by default (max-size × max-file): 1 GiB, a hundred times the default rotation's 30 MiB. */
export const DEFAULT_MAX_LOG_FILES_BYTES = 1024 ** 3;

/**
 * Defaults and validates the limits of a local runtime once, at construction: 1 MiB of output
 * per container, 1000 containers and 1 GiB of log files per container, so a client can grow
 * neither the host's memory nor its disk without bound.
 *
 * @example
 * localLimits({ maxContainers: 50 }, 'processRuntime') // { maxLogBytes: 1048576, maxContainers: 50, maxLogFilesBytes: 1073741824 }
 */
export function localLimits(options: { maxLogBytes?: number; maxContainers?: number; maxLogFilesBytes?: number }, runtime: string): LocalLimits {
  const check = optionChecks(runtime);
  const maxLogBytes = check.integerOption(options.maxLogBytes ?? 1024 * 1024, 'maxLogBytes', 1024);
  const maxContainers = check.integerOption(options.maxContainers ?? 1000, 'maxContainers', 1);
  const maxLogFilesBytes = check.integerOption(options.maxLogFilesBytes ?? DEFAULT_MAX_LOG_FILES_BYTES, 'maxLogFilesBytes', 1024 * 1024);
  return { maxLogBytes, maxContainers, maxLogFilesBytes };
}
