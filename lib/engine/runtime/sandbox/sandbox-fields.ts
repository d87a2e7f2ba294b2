import { EngineError } from '../../errors/engine-error.js';
import type { ContainerCreateBody } from '../types.js';
import type { LocalImage } from '../local/local-container.js';
import { refuseHostFields, UNHONORED_HOST_FIELDS } from '../local/refuse-fields.js';
import { asArray, parseBind, parseMount } from './bwrap-args.js';
import { resolveUserIn } from './passwd.js';

/**
 * Refuses, with a 400 naming the field, every create field the sandbox cannot honor, and
 * checks the honored ones (binds exist, capabilities are names, User names exist in the image).
 */
export function refuseUnsupported(body: ContainerCreateBody, image?: LocalImage): void {
  const host = body.HostConfig ?? {};
  refuseHostFields(body, UNHONORED_HOST_FIELDS, 'sandbox');
  if (host.Init !== undefined && host.Init !== null && typeof host.Init !== 'boolean') throw EngineError.invalidParameter('HostConfig.Init must be a boolean');
  for (const bind of asArray(host.Binds, 'HostConfig.Binds')) parseBind(bind);
  for (const m of asArray(host.Mounts, 'HostConfig.Mounts')) parseMount(m);
  if (host.Tmpfs !== undefined && host.Tmpfs !== null) {
    if (typeof host.Tmpfs !== 'object' || Array.isArray(host.Tmpfs)) throw EngineError.invalidParameter('HostConfig.Tmpfs must map paths to options');
    for (const [path, opts] of Object.entries(host.Tmpfs as Record<string, unknown>)) {
      if (!path.startsWith('/')) throw EngineError.invalidParameter(`HostConfig.Tmpfs path "${path}" must be absolute`);
      if (opts !== '' && opts !== undefined) throw EngineError.invalidParameter(`HostConfig.Tmpfs options for "${path}" are not supported by the sandbox runtime`);
    }
  }
  for (const field of ['CapAdd', 'CapDrop'] as const) {
    for (const cap of asArray(host[field], `HostConfig.${field}`)) {
      if (typeof cap !== 'string' || !/^(CAP_)?[A-Z_]+$/i.test(cap)) throw EngineError.invalidParameter(`HostConfig.${field}: invalid capability "${String(cap)}"`);
    }
  }
  const mode = host.NetworkMode;
  if (mode !== undefined && mode !== '' && mode !== 'default' && mode !== 'host' && mode !== 'none') {
    throw EngineError.invalidParameter(`HostConfig.NetworkMode "${String(mode)}" is not supported by the sandbox runtime (host or none)`);
  }
  const user = body.User;
  if (user !== undefined && user !== null && typeof user !== 'string') throw EngineError.invalidParameter('User must be a string');
  if (typeof user === 'string' && user !== '') {
    if (!/^[^:\s]+(:[^:\s]+)?$/.test(user)) throw EngineError.invalidParameter(`User "${user}" must be user[:group]`);
    if (image?.rootfs) resolveUserIn(image.rootfs, user);
    else if (!/^\d+(:\d+)?$/.test(user)) throw EngineError.invalidParameter(`User "${user}": the image has no /etc/passwd to look the name up in`);
  }
  if (body.WorkingDir !== undefined && body.WorkingDir !== '' && (typeof body.WorkingDir !== 'string' || !body.WorkingDir.startsWith('/'))) {
    throw EngineError.invalidParameter('WorkingDir must be an absolute path');
  }
}
