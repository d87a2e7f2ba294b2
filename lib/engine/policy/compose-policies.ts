import type { ConnectCheck } from '../../http/checked-fetch.js';
import type { EnginePolicy } from './policy-types.js';

/**
 * One policy made of several, asked in order: the first refusal (or hiding) answers; when all
 * allow, the first `onlyOwner` narrowing given holds, and every `withoutCapabilities` and
 * `connectCheck` applies (a connection passes when every check lets it through).
 *
 * @example
 * engineRouter(runtime, range, { policy: composePolicies(ownershipPolicy({ admin }), tenantPolicy({ admin })) });
 * @throws {TypeError} when an argument is not a function.
 */
export function composePolicies(...policies: EnginePolicy[]): EnginePolicy {
  policies.forEach((policy, i) => {
    if (typeof policy !== 'function') throw new TypeError(`composePolicies: argument ${i} must be an EnginePolicy function`);
  });
  return async (request) => {
    let onlyOwner: string | undefined;
    const without = new Set<string>();
    const checks: ConnectCheck[] = [];
    for (const policy of policies) {
      const decision = await policy(request);
      if (!decision.allow) return decision;
      if (onlyOwner === undefined && decision.onlyOwner !== undefined) onlyOwner = decision.onlyOwner;
      for (const cap of decision.withoutCapabilities ?? []) without.add(cap);
      if (decision.connectCheck) checks.push(decision.connectCheck);
    }
    const connectCheck: ConnectCheck | undefined = checks.length <= 1 ? checks[0] : (target) => checks.map((check) => check(target)).find((why) => why !== undefined);
    return {
      allow: true,
      ...(onlyOwner === undefined ? {} : { onlyOwner }),
      ...(without.size > 0 ? { withoutCapabilities: [...without] } : {}),
      ...(connectCheck ? { connectCheck } : {}),
    };
  };
}
