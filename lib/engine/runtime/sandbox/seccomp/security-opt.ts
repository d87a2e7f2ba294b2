import { EngineError } from '../../../../engine-api/engine-error.js';
import type { ContainerSpec } from '../../../../engine-api/container-spec.js';

/** What `HostConfig.SecurityOpt` asks of the sandbox's confinement. */
export interface SecurityOptions {
  /** `seccomp=unconfined`: no filter (whether the caller may ask is the engine policy's business). */
  seccompUnconfined: boolean;
}

/**
 * Parses `HostConfig.SecurityOpt` the way dockerd reads it (`key=value`, or the old `key:value`).
 * Honored: `seccomp=unconfined`, and `no-new-privileges` (true), which every sandbox process has
 * already (bubblewrap sets it). Refused by name: a seccomp profile (the CLI sends the file's JSON;
 * the sandbox has one filter, Docker's default, and no profile compiler), `no-new-privileges=false`
 * (it cannot be lifted), and every other option (apparmor, label, systempaths…).
 */
export function securityOptions(spec: ContainerSpec): SecurityOptions {
  const out: SecurityOptions = { seccompUnconfined: false };
  for (const opt of spec.host.securityOpt) {
    const at = opt.search(/[=:]/);
    const key = at < 0 ? opt : opt.slice(0, at);
    const value = at < 0 ? '' : opt.slice(at + 1);
    if (key === 'seccomp' && value === 'unconfined') {
      out.seccompUnconfined = true;
    } else if (key === 'seccomp') {
      throw EngineError.invalidParameter('HostConfig.SecurityOpt "seccomp=<profile>": a custom seccomp profile is not supported by the sandbox runtime (its filter is Docker\'s default profile; only seccomp=unconfined is accepted)');
    } else if (key === 'no-new-privileges' && (value === '' || value === 'true')) {
      // Already in force: bubblewrap sets no_new_privs on every sandbox process.
    } else {
      const shown = opt.length > 60 ? `${opt.slice(0, 60)}…` : opt;
      throw EngineError.invalidParameter(`HostConfig.SecurityOpt "${shown}" is not supported by the sandbox runtime (seccomp=unconfined and no-new-privileges only)`);
    }
  }
  return out;
}
