import type { DockgateLogger } from '../../logging/index.js';
import { errorFields } from '../../logging/index.js';
import { LocalRuntime } from '../runtime/local/local-runtime.js';
import type { ContainerRuntime, EngineEvent } from '../../engine-api/runtime-types.js';

/** Container actions worth a line: the lifecycle, not every attach or resize. */
const LIFECYCLE = new Set(['create', 'start', 'die', 'stop', 'kill', 'destroy', 'pause', 'unpause', 'restart', 'oom']);

const logged = new WeakMap<ContainerRuntime, Set<DockgateLogger>>();

/**
 * One log line per container lifecycle event of a local runtime (sandbox, process), read from
 * the runtime's own event bus, the one `GET /events` serves. The line names the container,
 * its image and, for `die`, the exit code; never its environment or command (they may hold
 * secrets). A docker runtime is left out: dockerd logs its own containers.
 */
export function logContainerEvents(runtime: ContainerRuntime, logger: DockgateLogger): void {
  if (!(runtime instanceof LocalRuntime)) return;
  let loggers = logged.get(runtime);
  if (!loggers) logged.set(runtime, (loggers = new Set()));
  if (loggers.has(logger)) return;
  loggers.add(logger);
  const log = logger.child({ component: 'engine', runtime: runtime.name });
  const filters = new Map([['type', new Set(['container'])]]);
  runtime.events({ filters, signal: new AbortController().signal }).then((stream) => {
    stream.on('data', (e: EngineEvent) => {
      if (!LIFECYCLE.has(e.Action)) return;
      const attrs = e.Actor.Attributes;
      log.info({
        event: `container.${e.Action}`,
        container: e.Actor.ID.slice(0, 12),
        name: attrs['name'],
        image: attrs['image'],
        ...(attrs['exitCode'] !== undefined ? { exit_code: Number(attrs['exitCode']) } : {}),
        ...(attrs['signal'] !== undefined ? { signal: Number(attrs['signal']) } : {}),
      }, `container ${e.Action}`);
    });
    stream.on('error', (err) => log.warn(errorFields(err), 'container event log stopped'));
  }, (err: unknown) => log.warn(errorFields(err), 'container events unavailable'));
}
