import { realpathSync } from 'node:fs';
import { isAbsolute, normalize } from 'node:path';
import { defaultAdmin, type AdminPredicate } from './admin-predicate.js';
import { hostReachingExecField, hostReachingField, hostReachingVolumeField } from './host-reaching-fields.js';
import { allow, allowWithout, refuse, type EnginePolicy } from './policy-types.js';

/** Options of {@link tenantPolicy}. */
export interface TenantPolicyOptions {
  /** Who administers: administrators may use every field. Defaults to holders of an `engine:api:admin` grant. */
  admin?: AdminPredicate;
  /**
   * Host directories tenants may bind (`-v DIR/sub:/x`), absolute. A source is checked with its
   * links resolved; the runtime keeps that resolution and refuses a start once a link is on its
   * path (the sandbox's held-binds.ts). Prefer directories no container can write in all the
   * same: the check and the runtime's resolution at create are two lookups.
   * Defaults to none: no host path at all.
   */
  allowedBindDirs?: readonly string[];
  /**
   * Whether tenants may publish ports on the host's loopback addresses (`-p 127.0.0.1:8080:80`,
   * 127.0.0.0/8 and ::1), where they could take a port a local service expects, or answer for
   * it. A binding without an address listens where the runtime's default says (the sandbox's
   * `publishHostIp`). Defaults to false.
   */
  allowLoopbackPublish?: boolean;
}

/** Capabilities of Docker's default set a tenant's containers go without unless their CapAdd names them. */
export const TENANT_DROPPED_CAPABILITIES: readonly string[] = Object.freeze(['NET_RAW']);

/** Runtimes that run a container's commands on the host itself and so cannot contain a tenant. */
const UNCONFINED_RUNTIMES: ReadonlySet<string> = new Set(['process']);

/**
 * Refuses to tenants whatever reaches the host (403 naming the field): binds and bind mounts of
 * host paths outside `allowedBindDirs`, Privileged, the host's PID/IPC/UTS/network/user/cgroup
 * namespaces, CapAdd beyond Docker's default set, Devices, SecurityOpt that loosens confinement
 * (seccomp=unconfined, apparmor=unconfined, label=disable…), Sysctls, CgroupParent, another
 * Runtime, unmasked paths, OOM-killer exemptions, privileged host ports, ports published on the
 * host's loopback (unless `allowLoopbackPublish`), `exec --privileged` and
 * volumes bound to host paths, and `docker import` from a URL (`fromSrc`: the engine would fetch
 * it from the host's network; the request-body form `fromSrc=-` stays allowed). Under the
 * process runtime, which cannot contain anything, a tenant may create neither containers nor
 * execs. A tenant's containers (and its builds' RUN containers) go without NET_RAW unless their
 * CapAdd names it (`withoutCapabilities`). Administrators are not restricted.
 *
 * @example
 * tenantPolicy({ allowedBindDirs: ['/srv/shared'] });
 * @throws {TypeError} naming the option that is malformed.
 */
export function tenantPolicy(options: TenantPolicyOptions = {}): EnginePolicy {
  const admin = options.admin ?? defaultAdmin;
  if (typeof admin !== 'function') throw new TypeError('tenantPolicy option "admin" must be a function (see adminPredicate)');
  const dirs = options.allowedBindDirs ?? [];
  if (!Array.isArray(dirs) || !dirs.every((d) => typeof d === 'string' && isAbsolute(d))) {
    throw new TypeError('tenantPolicy option "allowedBindDirs" must be a list of absolute directories');
  }
  const allowLoopbackPublish = options.allowLoopbackPublish ?? false;
  if (typeof allowLoopbackPublish !== 'boolean') throw new TypeError('tenantPolicy option "allowLoopbackPublish" must be a boolean');
  // Resolved once: a symlinked allowed directory is compared by where it really is.
  const allowedBindDirs = dirs.map((d) => {
    try {
      return realpathSync(d);
    } catch {
      return normalize(d);
    }
  });
  return ({ action, caller, body, spec, exec, source, runtime }) => {
    if (admin(caller)) return allow();
    // The engine fetches an import's URL itself, from the host's network: a tenant's URL could name
    // the host's loopback services, its LAN or a cloud metadata address (169.254.169.254).
    if (action === 'image.import' && source?.kind === 'url') {
      return refuse('fromSrc: importing from a URL is reserved to administrators (the engine would fetch it from the host\'s network); send the archive as the request body instead (fromSrc=-, docker import FILE)');
    }
    if ((action === 'container.create' || action === 'exec.create') && UNCONFINED_RUNTIMES.has(runtime)) {
      return refuse(`the ${runtime} runtime cannot contain a tenant: it runs commands on the host as the engine's own user. Only administrators may create containers or execs with it`);
    }
    const why = action === 'container.create' || action === 'image.build'
      ? spec && hostReachingField(spec, { allowedBindDirs, allowLoopbackPublish })
      : action === 'exec.create'
      ? exec && hostReachingExecField(exec)
      : !body
      ? undefined
      : action === 'volume.create'
      ? hostReachingVolumeField(body)
      : undefined;
    if (why !== undefined) return refuse(why);
    // Raw sockets forge packets (ARP, spoofed sources) on the networks the container is on: a
    // tenant's containers go without NET_RAW unless their CapAdd asks for it.
    if (action === 'container.create' || action === 'image.build') return allowWithout(TENANT_DROPPED_CAPABILITIES);
    // Removing volumes that others may use, all at once, is an administrator's cleanup.
    if (action === 'volume.prune') return refuse('pruning volumes is for administrators');
    return allow();
  };
}
