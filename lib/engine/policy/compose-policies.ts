import type { ConnectCheck } from '../../http/checked-fetch.js';
import type { EnginePolicy, ImageShown } from './policy-types.js';

/**
 * One policy made of several, asked in order: the first refusal (or hiding) answers; when all
 * allow, the first `onlyOwner` narrowing given holds, and every `withoutCapabilities` and
 * `connectCheck` and `showImage` applies (a connection passes, an image shows, when every one lets it).
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
    const shows: ImageShown[] = [];
    for (const policy of policies) {
      const decision = await policy(request);
      if (!decision.allow) return decision;
      if (onlyOwner === undefined && decision.onlyOwner !== undefined) onlyOwner = decision.onlyOwner;
      for (const cap of decision.withoutCapabilities ?? []) without.add(cap);
      if (decision.connectCheck) checks.push(decision.connectCheck);
      if (decision.showImage) shows.push(decision.showImage);
    }
    const connectCheck: ConnectCheck | undefined = checks.length <= 1 ? checks[0] : (target) => checks.map((check) => check(target)).find((why) => why !== undefined);
    return {
      allow: true,
      ...(onlyOwner === undefined ? {} : { onlyOwner }),
      ...(without.size > 0 ? { withoutCapabilities: [...without] } : {}),
      ...(connectCheck ? { connectCheck } : {}),
      ...(shows.length > 0 ? { showImage: async (image: Readonly<Record<string, unknown>>) => (await Promise.all(shows.map((show) => show(image)))).every(Boolean) } : {}),
    };
  };
}
