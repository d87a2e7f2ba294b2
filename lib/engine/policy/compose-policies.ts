import type { EnginePolicy, PolicyDecision } from './policy-types.js';

/**
 * One policy made of several, asked in order: the first refusal (or hiding) answers; when all
 * allow, the first `onlyOwner` narrowing given holds.
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
    let narrowed: PolicyDecision | undefined;
    for (const policy of policies) {
      const decision = await policy(request);
      if (!decision.allow) return decision;
      if (narrowed === undefined && decision.onlyOwner !== undefined) narrowed = decision;
    }
    return narrowed ?? { allow: true };
  };
}
