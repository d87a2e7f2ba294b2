import { EngineError } from '../../../engine-api/engine-error.js';
import type { ContainerRuntime } from '../../../engine-api/runtime-types.js';
import { ownerOf } from '../../policy/owner-label.js';

/** dockerd's name conflict (daemon/names.go), the same words from the local runtimes. */
const NAME_IN_USE = /^(.*The container name "[^"]*" is already in use) by container "([0-9a-f]{12,64})"\..*$/s;
/** dockerd's volume in use (volume/service): `remove NAME: volume is in use - [ID, ID]`. */
const VOLUME_IN_USE = /^(remove .*: volume is in use) - \[([0-9a-f, ]*)\]$/s;
/** dockerd's `docker rmi` of a reference a container uses (daemon/images/image_delete.go). */
const REFERENCE_IN_USE = /^(conflict: unable to remove repository reference ".*" \(must force\) - )container ([0-9a-f]{12,64})( is using its referenced image [0-9a-f]+)$/s;
/** dockerd's `docker rmi` of an image id a running or stopped container uses. */
const IMAGE_IN_USE = /^(conflict: unable to delete [0-9a-f]+ \((?:cannot|must) be forced\) - image is being used by )(running|stopped) container ([0-9a-f]{12,64})$/s;

/**
 * A conflict as a narrowed caller (a tenant, `onlyOwner`) may read it: when it names another
 * owner's container (the one holding a name, mounting a volume, using an image), the message
 * says the object is in use without that container's id, which opens every other race against
 * it. The caller's own containers, and any caller the policy did not narrow (an administrator),
 * get dockerd's words.
 */
export async function withoutForeignIds(error: unknown, runtime: ContainerRuntime, onlyOwner: string | undefined): Promise<unknown> {
  if (onlyOwner === undefined || !(error instanceof EngineError) || error.kind !== 'Conflict') return error;
  const own = async (id: string): Promise<boolean> => {
    const holder = await runtime.inspect(id).catch(() => undefined);
    return holder !== undefined && ownerOf((holder.Config as { Labels?: unknown } | undefined)?.Labels) === onlyOwner;
  };
  const name = NAME_IN_USE.exec(error.message);
  if (name) return (await own(name[2] as string)) ? error : EngineError.conflict(`${name[1] as string}.`);
  const volume = VOLUME_IN_USE.exec(error.message);
  if (volume) {
    const ids = (volume[2] as string).split(',').map((id) => id.trim()).filter((id) => id !== '');
    const kept: string[] = [];
    for (const id of ids) if (await own(id)) kept.push(id);
    if (kept.length === ids.length) return error;
    return EngineError.conflict(kept.length > 0 ? `${volume[1] as string} - [${kept.join(', ')}]` : (volume[1] as string));
  }
  const reference = REFERENCE_IN_USE.exec(error.message);
  if (reference) return (await own(reference[2] as string)) ? error : EngineError.conflict(`${reference[1] as string}a container${reference[3] as string}`);
  const image = IMAGE_IN_USE.exec(error.message);
  if (image) return (await own(image[3] as string)) ? error : EngineError.conflict(`${image[1] as string}a ${image[2] as string} container`);
  return error;
}
