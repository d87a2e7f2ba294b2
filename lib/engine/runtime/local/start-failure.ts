import { EngineError } from '../../../engine-api/engine-error.js';
import type { LocalContainer, LocalStatus } from './local-container.js';

/** A container's state before a start, given back when nothing ran. */
export interface BeforeStart {
  status: LocalStatus;
  startedAt?: Date | undefined;
  finishedAt?: Date | undefined;
}

/**
 * Records a start that failed on the container and answers the error the start rejects with.
 * Refused before anything ran: something the container names is gone (its network, 404), does
 * not run (the container whose network it joins, 409), or the start refuses what the container
 * holds or names (a link at its /etc, a bind source that changed, 400). dockerd answers those as
 * they are (its start refusals of a container's config are 400s, `startInvalidConfigError`) and
 * leaves the container as it was, with exit code 128 and the error. Any other failure leaves it
 * exited (127), answered as a 500 naming the container.
 */
export function startFailed(c: LocalContainer, before: BeforeStart, error: unknown): unknown {
  const missing = error instanceof EngineError && (error.kind === 'NotFound' || error.kind === 'Conflict' || error.kind === 'InvalidParameter');
  c.status = missing ? before.status : 'exited';
  c.exitCode = missing ? 128 : 127;
  c.error = (error as Error).message;
  if (missing) {
    c.startedAt = before.startedAt;
    c.finishedAt = before.finishedAt;
  } else c.finishedAt = new Date();
  c.log.endRun();
  if (missing) return error;
  return EngineError.system(`failed to start container ${c.id}: ${(error as Error).message}`, error);
}
