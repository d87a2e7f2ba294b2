import { EngineError } from '../../../engine-api/engine-error.js';
import type { ImageRecord } from '../image-store-types.js';
import { repositoryOf, shortId } from './references.js';

/** What `docker rmi` does to one image: the references to drop, and whether the image goes. */
export interface RemovalPlan {
  untag: string[];
  deleteImage: boolean;
}

/**
 * `docker rmi`, decided as dockerd decides it (daemon/images/image_delete.go):
 * - by a reference (`named`) while the image has others: only that reference is untagged;
 * - by its last reference: untagged, and the image deleted unless a container uses it (a
 *   stopped one without `force` is a 409 "must force"; a running one keeps the image untagged);
 * - by ID: a running container is a 409 that cannot be forced; several repositories or a stopped
 *   container need `force`; then every reference is untagged and the image deleted.
 *
 * @example
 * planRemoval(record, 'busybox:1', false, []); // { untag: ['busybox:1'], deleteImage: false } when busybox:latest remains
 */
export function planRemoval(record: ImageRecord, named: string | undefined, force: boolean, users: { id: string; running: boolean }[], asked = named ?? record.id): RemovalPlan {
  const running = users.find((u) => u.running);
  const stopped = users.find((u) => !u.running);
  const references = [...record.repoTags, ...record.repoDigests];
  if (named !== undefined && references.includes(named)) {
    const others = references.length - 1;
    const user = running ?? stopped;
    if (others === 0 && !force && user) {
      throw EngineError.conflict(`conflict: unable to remove repository reference "${asked}" (must force) - container ${shortId(user.id)} is using its referenced image ${shortId(record.id)}`);
    }
    return { untag: [named], deleteImage: others === 0 && !running };
  }
  const id = shortId(record.id);
  if (running) throw EngineError.conflict(`conflict: unable to delete ${id} (cannot be forced) - image is being used by running container ${shortId(running.id)}`);
  if (!force && new Set(record.repoTags.map(repositoryOf)).size > 1) throw EngineError.conflict(`conflict: unable to delete ${id} (must be forced) - image is referenced in multiple repositories`);
  if (!force && stopped) throw EngineError.conflict(`conflict: unable to delete ${id} (must be forced) - image is being used by stopped container ${shortId(stopped.id)}`);
  return { untag: references, deleteImage: true };
}
