import type { LocalContainer } from './local-container.js';

/** How long after its exit an AutoRemove container is removed (dockerd takes about this long). */
const AUTO_REMOVE_AFTER_MS = 200;

/**
 * dockerd removes an AutoRemove container about 0.2 s after its exit (measured: die → destroy
 * 160-210 ms), and clients count on that: docker-py's containers.run(auto_remove=True) asks
 * for the logs after start, when a quick command has already exited. A client attached
 * before the exit (`docker run --rm`, which then waits for "removed" or the destroy event)
 * already has the output: the container goes (`destroy`) as soon as its attach streams have
 * delivered the last of it, which is what makes `docker run --rm` no slower than dockerd's.
 */
export function scheduleAutoRemove(c: LocalContainer, destroy: () => void): void {
  const remove = (): void => {
    clearTimeout(timer);
    c.onDetach = undefined;
    if (c.status !== 'running') destroy();
  };
  const timer = setTimeout(remove, AUTO_REMOVE_AFTER_MS).unref();
  if ((c.attachedStreams ?? 0) > 0) c.onDetach = () => (c.attachedStreams ?? 0) === 0 && remove();
}
