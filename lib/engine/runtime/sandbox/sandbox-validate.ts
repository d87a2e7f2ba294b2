import type { ContainerSpec } from '../../../engine-api/container-spec.js';
import type { LocalImage } from '../local/local-container.js';
import { numericUser, refuseOtherUsers, refusePrivilegedPorts } from './rootless.js';
import { refuseUnsupported } from './sandbox-fields.js';
import type { SandboxState } from './sandbox-state.js';

/**
 * Refuses at create (a 400 naming the field, or a 409 for an owner beyond the range) what the
 * sandbox cannot run: its field checks (sandbox-fields.ts), the user networks' (sandbox-networks.ts),
 * a rootless server's low ports and users outside its range. The owner's range is assigned here,
 * at its first create: an owner beyond the server's range is refused before anything is made.
 */
export async function validateSandboxCreate(state: SandboxState, spec: ContainerSpec, image: LocalImage | undefined): Promise<void> {
  const { rootless, mapped, userNets, settings } = state;
  if (rootless) refusePrivilegedPorts(spec, state.firstPort, rootless);
  // Rootless with a mapped range, the owner's block is assigned here, at its first create: an owner beyond the range is refused before anything is made.
  mapped?.indexOf(spec.labels);
  const fromImage = await refuseUnsupported(spec, image, state.cgroups, state.cpus, { size: settings.defaults.tmpfsSize, total: settings.defaults.maxTmpfsBytes }, userNets !== undefined);
  userNets?.validate(spec);
  const userns = state.usernsOf(spec);
  const { user } = spec;
  // A name the image lacks is checked at the start (passwd.ts).
  const resolved = user === '' ? undefined : image?.rootfs ? fromImage : rootless ? numericUser(user) : undefined;
  if (userns && resolved && image?.rootfs) userns.checkUser(resolved, user);
  if (rootless && resolved) {
    if (mapped) mapped.checkUser(resolved, user);
    else refuseOtherUsers(resolved, user, rootless);
  }
}
