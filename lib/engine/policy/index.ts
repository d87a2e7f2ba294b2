/** The engine's policy checkpoint: action names, the policy types and the built-in policies. */
export { ENGINE_ACTIONS, ENGINE_ACTION_NAMES, isCollectionAction, type EngineAction, type EngineActionTarget } from './engine-actions.js';
export {
  allow, allowWithout, refuse, hide,
  type EnginePolicy, type PolicyRequest, type PolicyDecision, type PolicyLookup, type PolicyTarget, type ContainerTarget, type ExecTarget, type ImageTarget,
  type EngineCaller, type ImportSource, type ImageShown,
} from './policy-types.js';
export type { ConnectCheck, ConnectTarget } from '../../http/checked-fetch.js';
export { callerFromBearer, ANONYMOUS_CALLER, type CallerResolver } from './engine-caller.js';
export { composePolicies } from './compose-policies.js';
export { adminPredicate, defaultAdmin, DEFAULT_ADMIN_ACCESS, type AdminPredicate, type AdminPredicateOptions } from './admin-predicate.js';
export { OWNER_LABEL } from './owner-label.js';
export { ownershipPolicy, type OwnershipPolicyOptions } from './ownership-policy.js';
export { tenantPolicy, TENANT_DROPPED_CAPABILITIES, type TenantPolicyOptions } from './tenant-policy.js';
export { DEFAULT_CAPABILITIES } from './host-reaching-fields.js';
export { imageNamePolicy, type ImageNamePolicyOptions } from './image-name-policy.js';
export {
  ownerCapsPolicy, DEFAULT_MAX_CONTAINERS_PER_OWNER, DEFAULT_MAX_IMAGE_BYTES_PER_OWNER, type OwnerCapsPolicyOptions,
} from './owner-caps-policy.js';
export { tenantLimitsPolicy, DEFAULT_MAX_TENANT_MEMORY, type TenantLimitsPolicyOptions } from './tenant-limits-policy.js';
export { tenancyPolicy, type TenancyPolicyOptions } from './tenancy-policy.js';
