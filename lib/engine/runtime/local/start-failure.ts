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
 * Something the container names is gone (its network) or does not run (the container whose
 * network it joins): nothing ran. dockerd answers that 404 or 409 as it is and leaves the
 * container as it was, with exit code 128 and the error. Any other failure leaves it exited
 * (127), answered as a 500 naming the container.
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
  // A refusal of what the container itself holds (a link at its /etc) is the caller's to fix: a 400.
  if (error instanceof EngineError && error.kind === 'InvalidParameter') return EngineError.invalidParameter(`failed to start container ${c.id}: ${error.message}`);
  return EngineError.system(`failed to start container ${c.id}: ${(error as Error).message}`, error);
}
