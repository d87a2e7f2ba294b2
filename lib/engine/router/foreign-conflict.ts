import { EngineError } from '../../engine-api/engine-error.js';
import type { ContainerRuntime } from '../../engine-api/runtime-types.js';
import { ownerOf } from '../policy/owner-label.js';

/** dockerd's name conflict (daemon/names.go), the same words from the local runtimes. */
const NAME_IN_USE = /^(.*The container name "[^"]*" is already in use) by container "([0-9a-f]{12,64})"\..*$/s;

/**
 * A create's or rename's name conflict as a narrowed caller (a tenant, `onlyOwner`) may read it:
 * when the container holding the name is another owner's, the message says the name is in use
 * without its id (which opens every other race against that container); the caller's own
 * container, and any caller the policy did not narrow (an administrator), get dockerd's words.
 */
export async function withoutForeignIds(error: unknown, runtime: ContainerRuntime, onlyOwner: string | undefined): Promise<unknown> {
  if (onlyOwner === undefined || !(error instanceof EngineError) || error.kind !== 'Conflict') return error;
  const match = NAME_IN_USE.exec(error.message);
  if (!match) return error;
  const holder = await runtime.inspect(match[2] as string).catch(() => undefined);
  if (holder && ownerOf((holder.Config as { Labels?: unknown } | undefined)?.Labels) === onlyOwner) return error;
  return EngineError.conflict(`${match[1] as string}.`);
}
