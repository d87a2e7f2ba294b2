import { defaultAdmin, type AdminPredicate } from './admin-predicate.js';
import { inNamespace } from './image-namespace.js';
import { registryConnectCheck, registryHostList, registryHostRefusal } from './registry-hosts.js';
import { allow, refuse, type EnginePolicy } from './policy-types.js';

/** Options of {@link imageNamePolicy}. */
export interface ImageNamePolicyOptions {
  /** Who administers: administrators write every name. Defaults to holders of an `engine:api:admin` grant. */
  admin?: AdminPredicate;
  /**
   * The registry hosts a tenant may pull from and push to (`docker pull`, a build's `FROM`,
   * `docker push`, `docker login`), as `host` (every port) or `host:port`; Docker Hub is
   * `docker.io`. The server connects from its own network, so without a list a tenant may name
   * any host but a loopback or link-local one (`localhost`, 127.0.0.0/8, ::1, 169.254.0.0/16,
   * fe80::/10). Every connection such a request makes is checked when it is made, on the local
   * runtimes: with a list, each one (the registry, a redirect, the token realm) must go to a
   * listed host, so list the registry's token realm and blob storage hosts too (for Docker Hub,
   * `auth.docker.io` and `production.cloudflare.docker.com`); without one, no connection may
   * reach a loopback or link-local address, whatever name resolved to it. Administrators
   * connect anywhere. Defaults to no list.
   */
  registryHosts?: string[];
}

/** The actions that connect to the registry their reference names. */
const CONNECTS = new Set(['image.pull', 'image.push']);

const WRITES = new Set(['image.pull', 'image.load', 'image.tag', 'image.push', 'image.import', 'image.build', 'container.commit']);

/**
 * Image names belong to a policy too: a tenant creates, overwrites and deletes tags only under
 * its own namespace (`bob/…`, also behind a registry: `127.0.0.1:5000/bob/…`). Shared names
 * (`busybox`, `library/…`) and other tenants' namespaces are the administrators' to pull to,
 * load, tag, push and delete; so is `image prune`. Reading (list, inspect, save, running a container
 * of a shared image) stays open to all. A subject that is not a valid repository component
 * (`a@b.c`) has no namespace of its own. A tenant's pulls and pushes reach only the registry
 * hosts `registryHosts` allows (by default, none on loopback or link-local).
 *
 * @example
 * imageNamePolicy({ admin: adminPredicate({ subjects: ['root'] }) });
 */
export function imageNamePolicy(options: ImageNamePolicyOptions = {}): EnginePolicy {
  const admin = options.admin ?? defaultAdmin;
  if (typeof admin !== 'function') throw new TypeError('imageNamePolicy option "admin" must be a function (see adminPredicate)');
  const registryHosts = registryHostList(options.registryHosts, 'imageNamePolicy option "registryHosts"');
  const connectCheck = registryConnectCheck(registryHosts);
  return ({ action, caller, images = [], target }) => {
    if (admin(caller)) return allow();
    const subject = caller.subject;
    const own = subject ? `${subject}/…` : 'a namespace of your own (sign in)';
    if (WRITES.has(action)) {
      const shared = images.find((ref) => !inNamespace(ref, subject));
      if (shared !== undefined) return refuse(`${shared} is not in your namespace (${own}): only administrators may write it`);
      if (CONNECTS.has(action)) {
        for (const ref of images) {
          const refusal = registryHostRefusal(ref, registryHosts);
          if (refusal !== undefined) return refuse(refusal);
        }
      }
      // The names are judged as written; where they lead (DNS, redirects, token realms) is judged at each connection.
      return CONNECTS.has(action) || action === 'image.build' ? { allow: true, connectCheck } : allow();
    }
    if (action === 'system.auth') return { allow: true, connectCheck };
    if (action === 'image.delete') {
      if (images.length > 0) {
        const shared = images.find((ref) => !inNamespace(ref, subject));
        return shared === undefined ? allow() : refuse(`${shared} is not in your namespace (${own}): only administrators may delete it`);
      }
      // Deleting by id removes every tag the image has: all of them must be the caller's.
      const tags = target?.kind === 'image' ? target.repoTags ?? [] : [];
      if (tags.length === 0 || tags.some((t) => !inNamespace(t, subject))) {
        return refuse(`image ${target?.ref ?? ''} carries names outside your namespace (${own}) or none: only administrators may delete it by id`);
      }
      return allow();
    }
    if (action === 'image.prune') return refuse('pruning images is for administrators');
    return allow();
  };
}
